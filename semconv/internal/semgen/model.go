package semgen

// Registry is the checked content of a registry directory: every attribute
// and every metric, each sorted by name.
type Registry struct {
	Attributes []*Attribute
	Metrics    []*Metric
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
