package procfstest

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/semconv"
)

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestAssertTable(t *testing.T) {
	power, _ := semconv.LookupMetric(semconv.HwPowerName)
	energy, _ := semconv.LookupMetric(semconv.HwEnergyName)
	table := []receivers.Metric{
		{Name: power.Name, Kind: "Float64ObservableGauge", Unit: power.Unit, Description: power.Brief,
			Attributes: []attribute.Key{semconv.HwIDKey, semconv.HwParentKey}, Required: []attribute.Key{semconv.HwIDKey}},
	}
	gauge := func(sets ...attribute.Set) metricdata.Metrics {
		var pts []metricdata.DataPoint[float64]
		for _, s := range sets {
			pts = append(pts, metricdata.DataPoint[float64]{Attributes: s, Value: 1})
		}
		return Gauge(semconv.HwPowerName, pts...)
	}
	zone := attribute.NewSet(semconv.HwID("intel-rapl:0"))
	subzone := attribute.NewSet(semconv.HwID("intel-rapl:0:0"), semconv.HwParent("intel-rapl:0"))
	tests := []struct {
		name string
		got  []metricdata.Metrics
		want []string // substrings of the errors, one each; none: no error
	}{
		{"exact", []metricdata.Metrics{gauge(zone, subzone)}, nil},
		{"a metric the table lacks", []metricdata.Metrics{gauge(zone, subzone), Sum(energy.Name, true, metricdata.DataPoint[float64]{Attributes: zone, Value: 1})},
			[]string{"hw.energy: emitted, but the registry does not list it for this receiver"}},
		{"a metric of the table missing", nil,
			[]string{"hw.power: the registry lists it for this receiver (annotations.ortel.source), but the receiver emitted nothing"}},
		{"another kind", []metricdata.Metrics{Sum(power.Name, true, metricdata.DataPoint[float64]{Attributes: zone, Value: 1}, metricdata.DataPoint[float64]{Attributes: subzone, Value: 1})},
			[]string{"hw.power: data is Float64Counter, the table says Float64ObservableGauge"}},
		{"an attribute the table lacks", []metricdata.Metrics{gauge(subzone, attribute.NewSet(semconv.HwID("x"), semconv.HwName("package-0")))},
			[]string{"hw.power: points carry hw.name, which the registry does not list"}},
		{"an attribute of the table never set", []metricdata.Metrics{gauge(zone)},
			[]string{"hw.power: no point carries hw.parent"}},
		{"a required attribute missing", []metricdata.Metrics{gauge(zone, attribute.NewSet(semconv.HwParent("intel-rapl:0")))},
			[]string{"hw.power: a point lacks hw.id, which the table requires"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]metricdata.Metrics{}
			for _, m := range tt.got {
				got[m.Name] = m
			}
			r := &recorder{TB: t}
			AssertTable(r, got, table)
			if len(r.errs) != len(tt.want) {
				t.Fatalf("errors %q, want %d: %q", r.errs, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.errs[i], w) {
					t.Errorf("error %q, want %q", r.errs[i], w)
				}
			}
		})
	}
}
