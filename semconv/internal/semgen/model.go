package semgen

import (
	"maps"
	"slices"
	"strings"
)

// Registry is the checked content of a registry directory: every attribute
// and every metric, each sorted by name.
type Registry struct {
	Attributes []*Attribute
	Metrics    []*Metric
	// PointAttributes holds, per source, the attributes that source sets
	// on every point of every metric it emits, beyond each metric's own
	// (an attribute_group with annotations.ortel.source, such as the
	// process receiver's process.pid and pod attributes).
	PointAttributes map[string][]MetricAttribute
	PointBriefs     map[string]string // per source: why (its group's brief)
}

// Attribute is one attribute definition.
type Attribute struct {
	Name      string
	Type      string // string, int, double, boolean, string[], int[], double[], boolean[] or enum
	EnumType  string // for enums: string or int, the type of the member values
	Members   []Member
	Brief     string
	Note      string
	Stability string
	Examples  []any
	Upstream  bool // defined by the OpenTelemetry semantic conventions, reused here
	SpansOnly bool // too high-cardinality for metric attributes
	GoName    string
	File      string
	Line      int
	UsedBy    []string // names of the metrics that reference it, sorted
}

// Member is one value of an enum attribute.
type Member struct {
	ID        string
	Value     any // string or int
	Brief     string
	Stability string
	GoName    string // full identifier: attribute GoName + member part
}

// Metric is one metric definition.
type Metric struct {
	Name           string
	Instrument     string // counter, updowncounter, gauge or histogram
	Unit           string
	ValueType      string // int or double
	Brief          string
	Note           string
	Stability      string
	Source         []string // ortel packages that emit it
	DefaultEnabled bool
	Upstream       bool
	Observable     bool
	Buckets        []float64 // explicit histogram bucket boundaries, if any
	Attributes     []MetricAttribute
	GoName         string
	File           string
	Line           int

	// SourceAttributes holds, for a source that sets only some of
	// Attributes, the names of those it sets
	// (annotations.ortel.source_attributes).
	SourceAttributes map[string][]string
}

// MetricAttribute is an attribute reference of a metric.
type MetricAttribute struct {
	Attr      *Attribute
	Level     string // required, recommended, opt_in or conditionally_required
	Condition string // for conditionally_required (and any other level given as a map): the condition text
}

// Kind is the OTel metric API instrument type, such as Float64Histogram or
// Int64ObservableCounter.
func (m *Metric) Kind() string {
	v := "Int64"
	if m.ValueType == "double" {
		v = "Float64"
	}
	if m.Observable {
		v += "Observable"
	}
	switch m.Instrument {
	case "counter":
		return v + "Counter"
	case "updowncounter":
		return v + "UpDownCounter"
	case "gauge":
		return v + "Gauge"
	default:
		return v + "Histogram"
	}
}

// AttributesOf returns the attributes source sets on the points of m: the
// metric's own, in registry order (only those its source_attributes name
// for source, if it names any), then those source sets on every point.
func (reg *Registry) AttributesOf(m *Metric, source string) []MetricAttribute {
	var out []MetricAttribute
	only, some := m.SourceAttributes[source]
	for _, ma := range m.Attributes {
		if !some || slices.Contains(only, ma.Attr.Name) {
			out = append(out, ma)
		}
	}
	return append(out, reg.PointAttributes[source]...)
}

// ReceiverPrefix begins every source that is a receiver package
// ("receivers/cpu"); the generator writes a table into each.
const ReceiverPrefix = "receivers/"

// Receiver is one receiver package and the metrics it emits.
type Receiver struct {
	Source  string // "receivers/cpu"
	Package string // "cpu"
	Metrics []*Metric
}

// Receivers returns the receiver packages the registry names as sources,
// sorted by name, each with its metrics in registry (name) order.
func (reg *Registry) Receivers() []Receiver {
	byName := map[string]*Receiver{}
	for _, m := range reg.Metrics {
		for _, s := range m.Source {
			if !strings.HasPrefix(s, ReceiverPrefix) {
				continue
			}
			r := byName[s]
			if r == nil {
				r = &Receiver{Source: s, Package: strings.TrimPrefix(s, ReceiverPrefix)}
				byName[s] = r
			}
			r.Metrics = append(r.Metrics, m)
		}
	}
	out := make([]Receiver, 0, len(byName))
	for _, s := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[s])
	}
	return out
}
