package stack

import (
	"slices"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

func TestPromName(t *testing.T) {
	tests := []struct {
		name, unit, instrument string
		want                   string
	}{
		{"onnxruntime.run.duration", "s", Histogram, "onnxruntime_run_duration_seconds"},
		{"onnxruntime.runs", "{run}", Counter, "onnxruntime_runs_total"},
		{"onnxruntime.run.errors", "{error}", Counter, "onnxruntime_run_errors_total"},
		{"onnxruntime.run.active", "{run}", UpDownCounter, "onnxruntime_run_active"},
		{"ortel.stage.duration", "s", Histogram, "ortel_stage_duration_seconds"},
		{"system.cpu.utilization", "1", Gauge, "system_cpu_utilization_ratio"},
		{"system.cpu.time", "s", Counter, "system_cpu_time_seconds_total"},
		{"system.cpu.frequency", "Hz", Gauge, "system_cpu_frequency_hertz"},
		{"system.memory.usage", "By", UpDownCounter, "system_memory_usage_bytes"},
		{"hw.status", "1", UpDownCounter, "hw_status"},
		{"hw.energy", "J", Counter, "hw_energy_joules_total"},
		{"hw.power", "W", Gauge, "hw_power_watts"},
		{"hw.temperature", "Cel", Gauge, "hw_temperature_celsius"},
		{"hw.gpu.io", "By", Counter, "hw_gpu_io_bytes_total"},
		{"nvidia.gpu.pcie.throughput", "By/s", Gauge, "nvidia_gpu_pcie_throughput_bytes_per_second"},
		{"process.unix.file_descriptor.count", "{file_descriptor}", UpDownCounter, "process_unix_file_descriptor_count"},
		{"traces.span.metrics.calls", "", Counter, "traces_span_metrics_calls_total"},
		{"traces.span.metrics.duration", "s", Histogram, "traces_span_metrics_duration_seconds"},
		// The unit is not repeated, nor are _total and _ratio.
		{"queue.wait.seconds", "s", Histogram, "queue_wait_seconds"},
		{"requests.total", "{request}", Counter, "requests_total"},
		{"cache.hit.ratio", "1", Gauge, "cache_hit_ratio"},
		{"2xx.count", "{response}", Counter, "_2xx_count_total"},
		{"odd..name--x", "", Gauge, "odd_name_x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PromName(tt.name, tt.unit, tt.instrument); got != tt.want {
				t.Errorf("PromName(%q, %q, %q) = %q, want %q", tt.name, tt.unit, tt.instrument, got, tt.want)
			}
		})
	}
}

func TestSeries(t *testing.T) {
	tests := []struct {
		name, unit, instrument string
		want                   []string
	}{
		{"onnxruntime.node.duration", "s", Histogram, []string{
			"onnxruntime_node_duration_seconds_bucket", "onnxruntime_node_duration_seconds_sum", "onnxruntime_node_duration_seconds_count"}},
		{"hw.power", "W", Gauge, []string{"hw_power_watts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Series(tt.name, tt.unit, tt.instrument); !slices.Equal(got, tt.want) {
				t.Errorf("Series = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLabelName(t *testing.T) {
	tests := map[string]string{
		"onnxruntime.node.op_type": "onnxruntime_node_op_type",
		"error.type":               "error_type",
		"hw.id":                    "hw_id",
		"cpu.logical_number":       "cpu_logical_number",
		"a-b c":                    "a_b_c",
		"1st":                      "key_1st",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := LabelName(in); got != want {
				t.Errorf("LabelName(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

// Every registered metric maps to a distinct Prometheus name: two names
// colliding after translation would merge unrelated series.
func TestRegistryPromNamesDistinct(t *testing.T) {
	seen := map[string]string{}
	for _, m := range semconv.Metrics {
		for _, s := range MetricSeries(m) {
			if prev, dup := seen[s]; dup {
				t.Errorf("metrics %q and %q both become Prometheus series %q", prev, m.Name, s)
			}
			seen[s] = m.Name
		}
	}
	if len(seen) == 0 {
		t.Fatal("semconv.Metrics is empty")
	}
}
