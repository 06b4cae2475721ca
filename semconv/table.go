package semconv

// Metric describes one registered metric. The generated Metrics table holds
// one per metric, so code and tests can iterate over every name ortel emits.
type Metric struct {
	Name           string   // e.g. "onnxruntime.run.duration"
	Instrument     string   // counter, updowncounter, gauge or histogram
	Kind           string   // the OTel metric API type, e.g. "Float64Histogram", "Int64ObservableCounter"
	Unit           string   // UCUM, e.g. "s", "By", "{run}"
	ValueType      string   // int or double
	Brief          string   // the instrument description
	Source         string   // the ortel package(s) that emit it, comma-separated, e.g. "receivers/cpu"
	DefaultEnabled bool     // whether it is on when not configured otherwise
	Upstream       bool     // reused from the OpenTelemetry semantic conventions
	Observable     bool     // an asynchronous (observable) instrument
	Attributes     []string // attribute keys, in registry order
	Required       []string // the attribute keys whose requirement level is required
	Buckets        []float64
}

// Attribute describes one registered attribute.
type Attribute struct {
	Key       string   // e.g. "onnxruntime.model.name"
	Type      string   // string, int, double, boolean, string[], ... or enum
	Brief     string   // what it means
	Stability string   // development, release_candidate, stable
	Upstream  bool     // reused from the OpenTelemetry semantic conventions
	SpansOnly bool     // too high-cardinality for metrics; spans only
	Values    []string // the members of an enum
	Metrics   []string // names of the metrics that use it
}

// LookupMetric returns the registered metric called name.
func LookupMetric(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// LookupAttribute returns the registered attribute with the given key.
func LookupAttribute(key string) (Attribute, bool) {
	for _, a := range Attributes {
		if a.Key == key {
			return a, true
		}
	}
	return Attribute{}, false
}
