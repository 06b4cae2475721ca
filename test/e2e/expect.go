package e2e

import (
	"fmt"
	"slices"

	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/stack"
)

// MetricExpectation is a registered metric the end-to-end test requires in
// Prometheus, with the attributes every one of its series must carry.
type MetricExpectation struct {
	Metric string   // registry name, e.g. "system.cpu.utilization"
	Labels []string // attribute keys, e.g. "cpu.mode"
}

// HardwareMetrics are the hardware readings `ortel bench` must ship next to
// the model metrics. Extend the list as receivers join the bench; each
// entry must be a registered metric with those attributes (a unit test
// checks), and the test derives the Prometheus names from the registry.
var HardwareMetrics = []MetricExpectation{
	{Metric: "system.cpu.utilization", Labels: []string{"cpu.mode"}},
	{Metric: "system.cpu.time", Labels: []string{"cpu.mode"}},
	{Metric: "system.memory.usage", Labels: []string{"system.memory.state"}},
	{Metric: "system.memory.utilization", Labels: []string{"system.memory.state"}},
	{Metric: "process.cpu.utilization", Labels: []string{"cpu.mode"}},
	{Metric: "process.cpu.time", Labels: []string{"cpu.mode"}},
	{Metric: "process.memory.usage"},
}

// Hardware says which optional readings a machine can give.
type Hardware struct {
	GPU  bool // an NVIDIA GPU and driver (NVML)
	RAPL bool // readable RAPL energy counters (/sys/class/powercap)
}

// Available reports whether the machine can produce a reading that needs
// what: "gpu", "energy" (RAPL or a GPU) or "" (nothing special).
func (h Hardware) Available(what string) bool {
	switch what {
	case "gpu":
		return h.GPU
	case "energy":
		return h.RAPL || h.GPU
	}
	return true
}

// hardwareNeeds maps registered metrics that only some machines produce to
// what they need. The dashboard check excuses them when it is missing.
var hardwareNeeds = map[string]string{
	"hw.gpu.utilization":        "gpu",
	"hw.gpu.memory.utilization": "gpu",
	"hw.gpu.memory.usage":       "gpu",
	"hw.gpu.memory.limit":       "gpu",
	"hw.gpu.io":                 "gpu",
	"hw.power":                  "energy",
	"hw.energy":                 "energy",
	"ortel.inference.energy":    "energy",
}

// Needs returns what hardware a Prometheus series name needs ("" for
// none), looking it up through the registry; nvidia.* metrics need a GPU.
func Needs(series string) string {
	for _, m := range semconv.Metrics {
		if !slices.Contains(stack.MetricSeries(m), series) {
			continue
		}
		if n, ok := hardwareNeeds[m.Name]; ok {
			return n
		}
		if len(m.Name) > 7 && m.Name[:7] == "nvidia." {
			return "gpu"
		}
		return ""
	}
	return ""
}

// Resolve returns the registered metric and the Prometheus label names of
// an expectation, or an error when the registry lacks the metric or one of
// the attributes on it.
func (e MetricExpectation) Resolve() (semconv.Metric, []string, error) {
	m, ok := semconv.LookupMetric(e.Metric)
	if !ok {
		return semconv.Metric{}, nil, fmt.Errorf("metric %q is not in the semconv registry", e.Metric)
	}
	labels := make([]string, 0, len(e.Labels))
	for _, l := range e.Labels {
		if !slices.Contains(m.Attributes, l) {
			return semconv.Metric{}, nil, fmt.Errorf("metric %q has no attribute %q in the registry (it has %q)", e.Metric, l, m.Attributes)
		}
		labels = append(labels, stack.LabelName(l))
	}
	return m, labels, nil
}
