package e2e

import (
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

// Every expectation names a registered metric and attributes it has.
func TestHardwareMetricsAreRegistered(t *testing.T) {
	if len(HardwareMetrics) == 0 {
		t.Fatal("no hardware expectations")
	}
	for _, e := range HardwareMetrics {
		t.Run(e.Metric, func(t *testing.T) {
			m, labels, err := e.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if m.Name != e.Metric || len(labels) != len(e.Labels) {
				t.Errorf("Resolve = %v, %q", m.Name, labels)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []MetricExpectation{
		{Metric: "system.cpu.nonsense"},
		{Metric: "system.cpu.utilization", Labels: []string{"gpu.mode"}},
	}
	for _, e := range tests {
		t.Run(e.Metric, func(t *testing.T) {
			if _, _, err := e.Resolve(); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestHardwareNeedsAreRegistered(t *testing.T) {
	for name := range hardwareNeeds {
		if _, ok := semconv.LookupMetric(name); !ok {
			t.Errorf("%s is not a registered metric", name)
		}
	}
}

func TestNeeds(t *testing.T) {
	tests := []struct{ series, want string }{
		{"hw_gpu_utilization_ratio", "gpu"},
		{"hw_power_watts", "energy"},
		{"hw_energy_joules_total", "energy"},
		{"ortel_inference_energy_joules", "energy"},
		{"nvidia_gpu_sm_utilization_ratio", "gpu"},
		{"onnxruntime_run_duration_seconds_bucket", ""},
		{"system_cpu_utilization_ratio", ""},
		{"traces_span_metrics_calls_total", ""},
	}
	for _, tt := range tests {
		t.Run(tt.series, func(t *testing.T) {
			if got := Needs(tt.series); got != tt.want {
				t.Errorf("Needs(%q) = %q, want %q", tt.series, got, tt.want)
			}
		})
	}
	h := Hardware{RAPL: true}
	if !h.Available("energy") || h.Available("gpu") || !h.Available("") {
		t.Errorf("Available on %+v is wrong", h)
	}
	if !(Hardware{GPU: true}).Available("energy") {
		t.Error("a GPU gives energy readings")
	}
}
