package procfstest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers"
)

// AssertTable checks that got, what a receiver emitted with every metric
// on, is exactly what table (the receiver's generated Metrics, from the
// semconv registry) lists: every metric of the table and no other, each
// with the table's instrument kind, unit and description, its points
// carrying between them exactly the table's attribute keys, and each point
// every required one. So a metric the code emits but the registry does not
// give the receiver fails here, and so does the reverse. got must come
// from a fixture and enough collections to produce every metric and
// attribute.
func AssertTable(t testing.TB, got map[string]metricdata.Metrics, table []receivers.Metric) {
	t.Helper()
	const fix = "semconv/registry, then go generate ./..."
	listed := map[string]bool{}
	for _, want := range table {
		listed[want.Name] = true
		m, ok := got[want.Name]
		if !ok {
			t.Errorf("%s: the registry lists it for this receiver (annotations.ortel.source), but the receiver emitted nothing for it; emit it, or take the receiver out of its source in %s", want.Name, fix)
			continue
		}
		if kind := dataKind(m.Data); kind != strings.Replace(want.Kind, "Observable", "", 1) {
			t.Errorf("%s: data is %s, the table says %s", want.Name, kind, want.Kind)
		}
		if m.Unit != want.Unit || m.Description != want.Description {
			t.Errorf("%s: unit %q, description %q; the table says %q, %q", want.Name, m.Unit, m.Description, want.Unit, want.Description)
		}
		seen := map[attribute.Key]bool{}
		sets := PointAttributes(m)
		if len(sets) == 0 {
			t.Errorf("%s: no points", want.Name)
		}
		for _, set := range sets {
			for _, kv := range set.ToSlice() {
				seen[kv.Key] = true
			}
			for _, k := range want.Required {
				if !set.HasValue(k) {
					t.Errorf("%s: a point lacks %s, which the table requires: %v", want.Name, k, set.ToSlice())
				}
			}
		}
		for k := range seen {
			if !slices.Contains(want.Attributes, k) {
				t.Errorf("%s: points carry %s, which the registry does not list for this receiver; add it to the metric's attributes (and its source_attributes) or to the receiver's point attributes in %s", want.Name, k, fix)
			}
		}
		for _, k := range want.Attributes {
			if !seen[k] {
				t.Errorf("%s: no point carries %s, which the table lists; set it, or leave it out with the metric's source_attributes in %s", want.Name, k, fix)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if !listed[name] {
			t.Errorf("%s: emitted, but the registry does not list it for this receiver; add the receiver to its annotations.ortel.source in %s", name, fix)
		}
	}
}

// dataKind names the instrument kind that produces d with the SDK's
// default aggregation, without "Observable": Int64Counter,
// Float64UpDownCounter, Float64Gauge, ...
func dataKind(d metricdata.Aggregation) string {
	sum := func(monotonic bool) string {
		if monotonic {
			return "Counter"
		}
		return "UpDownCounter"
	}
	switch v := d.(type) {
	case metricdata.Sum[int64]:
		return "Int64" + sum(v.IsMonotonic)
	case metricdata.Sum[float64]:
		return "Float64" + sum(v.IsMonotonic)
	case metricdata.Gauge[int64]:
		return "Int64Gauge"
	case metricdata.Gauge[float64]:
		return "Float64Gauge"
	case metricdata.Histogram[int64]:
		return "Int64Histogram"
	case metricdata.Histogram[float64]:
		return "Float64Histogram"
	}
	return "unknown"
}

// PointAttributes returns the attribute set of every point of m, whatever
// its kind of data.
func PointAttributes(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch v := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range v.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, p := range v.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range v.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range v.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[int64]:
		for _, p := range v.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range v.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}
