package semconv_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

// The names the team agreed on (CONVENTIONS.md, issues 2 and 3), with the
// instrument, unit and value type each must have. A registry edit that
// drops or changes one of them fails here.
var conventionMetrics = []struct {
	name, instrument, unit, valueType string
	observable                        bool
}{
	// issue 2
	{"onnxruntime.session.creation.duration", "histogram", "s", "double", false},
	{"onnxruntime.run.duration", "histogram", "s", "double", false},
	{"onnxruntime.runs", "counter", "{run}", "int", true},
	{"onnxruntime.run.errors", "counter", "{error}", "int", false},
	{"onnxruntime.run.active", "updowncounter", "{run}", "int", true},
	{"onnxruntime.node.duration", "histogram", "s", "double", false},
	{"ortel.stage.duration", "histogram", "s", "double", false},
	// issue 3, upstream
	{"system.cpu.time", "counter", "s", "double", true},
	{"system.cpu.utilization", "gauge", "1", "double", true},
	{"system.cpu.frequency", "gauge", "Hz", "int", true},
	{"system.cpu.logical.count", "updowncounter", "{cpu}", "int", true},
	{"system.memory.usage", "updowncounter", "By", "int", true},
	{"system.memory.limit", "updowncounter", "By", "int", true},
	{"system.memory.utilization", "gauge", "1", "double", true},
	{"system.memory.linux.available", "updowncounter", "By", "int", true},
	{"system.paging.usage", "updowncounter", "By", "int", true},
	{"system.paging.utilization", "gauge", "1", "double", true},
	{"system.paging.faults", "counter", "{fault}", "int", true},
	{"system.paging.operations", "counter", "{operation}", "int", true},
	{"process.cpu.time", "counter", "s", "double", true},
	{"process.cpu.utilization", "gauge", "1", "double", true},
	{"process.memory.usage", "updowncounter", "By", "int", true},
	{"process.memory.virtual", "updowncounter", "By", "int", true},
	{"process.thread.count", "updowncounter", "{thread}", "int", true},
	{"process.context_switches", "counter", "{context_switch}", "int", true},
	{"process.paging.faults", "counter", "{fault}", "int", true},
	{"process.unix.file_descriptor.count", "updowncounter", "{file_descriptor}", "int", true},
	{"process.disk.io", "counter", "By", "int", true},
	{"hw.energy", "counter", "J", "double", true},
	{"hw.power", "gauge", "W", "double", true},
	{"hw.temperature", "gauge", "Cel", "double", true},
	{"hw.temperature.limit", "gauge", "Cel", "double", true},
	{"hw.gpu.utilization", "gauge", "1", "double", true},
	{"hw.gpu.memory.usage", "updowncounter", "By", "int", true},
	{"hw.gpu.memory.limit", "updowncounter", "By", "int", true},
	{"hw.gpu.memory.utilization", "gauge", "1", "double", true},
	{"hw.gpu.io", "counter", "By", "int", true},
	{"hw.errors", "counter", "{error}", "int", true},
	{"hw.status", "updowncounter", "1", "int", true},
	// issue 3, ortel's own
	{"ortel.system.context_switches", "counter", "{context_switch}", "int", true},
	{"ortel.system.interrupts", "counter", "{interrupt}", "int", true},
	{"ortel.system.load_average", "gauge", "{thread}", "double", true},
	{"ortel.perf.instructions", "counter", "{instruction}", "int", true},
	{"ortel.perf.cycles", "counter", "{cycle}", "int", true},
	{"ortel.perf.cache.references", "counter", "{reference}", "int", true},
	{"ortel.perf.cache.misses", "counter", "{miss}", "int", true},
	{"ortel.perf.branch.misses", "counter", "{miss}", "int", true},
	{"ortel.perf.context_switches", "counter", "{context_switch}", "int", true},
	{"ortel.perf.page_faults", "counter", "{fault}", "int", true},
	{"ortel.perf.cpu_migrations", "counter", "{migration}", "int", true},
	{"ortel.perf.ipc", "gauge", "1", "double", true},
	{"ortel.perf.cache.hit_ratio", "gauge", "1", "double", true},
	{"nvidia.gpu.clock.frequency", "gauge", "Hz", "int", true},
	{"nvidia.gpu.throttle.active", "gauge", "1", "double", true},
	{"nvidia.gpu.process.memory.usage", "gauge", "By", "int", true},
	{"nvidia.gpu.process.utilization", "gauge", "1", "double", true},
	{"nvidia.gpu.sm.utilization", "gauge", "1", "double", true},
	{"nvidia.gpu.sm.occupancy", "gauge", "1", "double", true},
	{"nvidia.gpu.tensor.activity", "gauge", "1", "double", true},
	{"nvidia.gpu.dram.activity", "gauge", "1", "double", true},
	{"nvidia.gpu.pcie.throughput", "gauge", "By/s", "double", true},
	{"ortel.inference.energy", "gauge", "J", "double", false},
}

var conventionAttributes = []string{
	// issue 2
	"onnxruntime.model.name", "onnxruntime.session.id", "onnxruntime.execution_provider",
	"onnxruntime.execution_providers", "onnxruntime.batch_size", "onnxruntime.run.profiled",
	"onnxruntime.node.name", "onnxruntime.node.op_type", "onnxruntime.node.index",
	"onnxruntime.node.input_type_shapes", "onnxruntime.node.output_type_shapes",
	"onnxruntime.node.activation_size", "onnxruntime.node.parameter_size", "onnxruntime.node.output_size",
	"onnxruntime.node.threads.count", "onnxruntime.node.threads.sub_runs",
	"onnxruntime.node.threads.main_run_ratio", "onnxruntime.node.threads.imbalance",
	"ortel.stage.name", "ortel.pipeline.name", "error.type",
	// issue 3
	"cpu.mode", "cpu.logical_number", "system.memory.state", "system.paging.state",
	"system.paging.direction", "system.paging.fault.type", "system.device", "process.pid",
	"process.context_switch.type", "disk.io.direction", "network.io.direction", "hw.id", "hw.name",
	"hw.type", "hw.model", "hw.vendor", "hw.driver_version", "hw.gpu.task", "hw.limit_type",
	"hw.state", "hw.sensor_location", "hw.parent",
	"ortel.load_average.window", "nvidia.clock.type", "nvidia.throttle.reason",
}

func TestConventionMetricsRegistered(t *testing.T) {
	for _, c := range conventionMetrics {
		t.Run(c.name, func(t *testing.T) {
			m, ok := semconv.LookupMetric(c.name)
			if !ok {
				t.Fatalf("%s is not registered", c.name)
			}
			if m.Instrument != c.instrument || m.Unit != c.unit || m.ValueType != c.valueType || m.Observable != c.observable {
				t.Errorf("got %s %q %s observable=%t, want %s %q %s observable=%t",
					m.Instrument, m.Unit, m.ValueType, m.Observable, c.instrument, c.unit, c.valueType, c.observable)
			}
		})
	}
}

func TestConventionAttributesRegistered(t *testing.T) {
	for _, key := range conventionAttributes {
		if _, ok := semconv.LookupAttribute(key); !ok {
			t.Errorf("attribute %s is not registered", key)
		}
	}
}

func TestTablesConsistent(t *testing.T) {
	if !sort.SliceIsSorted(semconv.Metrics, func(i, j int) bool { return semconv.Metrics[i].Name < semconv.Metrics[j].Name }) {
		t.Error("Metrics is not sorted by name")
	}
	if !sort.SliceIsSorted(semconv.Attributes, func(i, j int) bool { return semconv.Attributes[i].Key < semconv.Attributes[j].Key }) {
		t.Error("Attributes is not sorted by key")
	}
	own := func(name string) bool {
		return strings.HasPrefix(name, "onnxruntime.") || strings.HasPrefix(name, "nvidia.") || strings.HasPrefix(name, "ortel.")
	}
	for _, m := range semconv.Metrics {
		if own(m.Name) == m.Upstream {
			t.Errorf("%s: upstream=%t does not match its namespace", m.Name, m.Upstream)
		}
		if m.Source == "" {
			t.Errorf("%s: no source", m.Name)
		}
		for _, key := range m.Attributes {
			a, ok := semconv.LookupAttribute(key)
			switch {
			case !ok:
				t.Errorf("%s: attribute %s is not registered", m.Name, key)
			case a.SpansOnly:
				t.Errorf("%s: attribute %s is for spans only", m.Name, key)
			case !slices.Contains(a.Metrics, m.Name):
				t.Errorf("attribute %s does not list metric %s", key, m.Name)
			}
		}
		for _, key := range m.Required {
			if !slices.Contains(m.Attributes, key) {
				t.Errorf("%s: required attribute %s is not among its attributes", m.Name, key)
			}
		}
	}
	for _, a := range semconv.Attributes {
		if own(a.Key) == a.Upstream {
			t.Errorf("%s: upstream=%t does not match its namespace", a.Key, a.Upstream)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	if _, ok := semconv.LookupMetric("onnxruntime.no.such.metric"); ok {
		t.Error("LookupMetric found an unregistered name")
	}
	if _, ok := semconv.LookupAttribute("onnxruntime.no.such.attribute"); ok {
		t.Error("LookupAttribute found an unregistered key")
	}
}

// TestGeneratedIdentifiers pins a few identifiers other packages use, as
// CONVENTIONS.md spells them.
func TestGeneratedIdentifiers(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{semconv.OnnxruntimeRunDurationName, "onnxruntime.run.duration"},
		{semconv.HwGPUIOName, "hw.gpu.io"},
		{semconv.SystemCPUTimeName, "system.cpu.time"},
		{string(semconv.ProcessPIDKey), "process.pid"},
		{semconv.HwTypeCPU.Value.AsString(), "cpu"},
		{semconv.CPUModeUser.Value.AsString(), "user"},
		{semconv.HwGPUTaskGeneral.Value.AsString(), "general"},
		{string(semconv.ErrorTypeOther.Key), "error.type"},
		{semconv.ErrorTypeOther.Value.AsString(), "_OTHER"},
		{semconv.OrtelStageName("detect").Value.AsString(), "detect"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if v := semconv.OnnxruntimeExecutionProviders([]string{"CUDAExecutionProvider", "CPUExecutionProvider"}).Value.AsStringSlice(); len(v) != 2 {
		t.Errorf("OnnxruntimeExecutionProviders = %v", v)
	}
	if v := semconv.OnnxruntimeBatchSize(8).Value.AsInt64(); v != 8 {
		t.Errorf("OnnxruntimeBatchSize(8) = %d", v)
	}
	if v := semconv.OnnxruntimeRunProfiled(true).Value.AsBool(); !v {
		t.Error("OnnxruntimeRunProfiled(true) is false")
	}
	if v := semconv.OnnxruntimeNodeThreadsImbalance(1.5).Value.AsFloat64(); v != 1.5 {
		t.Errorf("OnnxruntimeNodeThreadsImbalance(1.5) = %v", v)
	}
}
