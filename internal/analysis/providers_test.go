package analysis

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/profile"
	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// The profiles under testdata/providers are ONNX Runtime profiles of
// accelerated sessions, which this CPU-only build cannot produce:
//
//   - cuda_mnist.json: mnist-8 on the CUDA provider, the second run of the
//     profile printed in MetaQuotes' MQL5 documentation of ONNX profiling
//     (its event lines are cut there after the first input shape; the
//     remaining shapes and sizes are mnist-8's). Every node on CUDA, no
//     copy: a clean GPU run that must raise no fallback or copy finding.
//   - webgpu_fallback.json: the fallback pattern a public WebGPU profile
//     summary reports (Less on WebGPU, Unsqueeze of bool[65] on the CPU,
//     "Memcpy_token_58" MemcpyToHost of bool[65] taking 10.274 ms, Cast and
//     Min on the CPU), cut to one run of 12 nodes, with the args ONNX
//     Runtime's sequential executor writes (op_name, provider, node_index,
//     activation_size, parameter_size, output_size, input_type_shape,
//     output_type_shape, thread_scheduling_stats) and Memcpy nodes on the
//     requested provider, as ONNX Runtime's MemcpyTransformer places them.
//   - dml_noargs.json: the DirectML profile quoted in onnxruntime issue
//     24306, whose node events carry no args at all (no provider).
//
// The arg names and their meaning are those of the KernelScope in
// onnxruntime/core/framework/sequential_executor.cc: "provider" is the
// kernel's provider (KernelDef().Provider()), so a Memcpy node reports the
// device provider whose kernel copies, and "output_size" sums the bytes of
// the node's outputs.

// profileTimeline reads the kernel events of a profile into a timeline, as
// bench's operator collector does.
func profileTimeline(t *testing.T, file string) []report.NodeTiming {
	t.Helper()
	var tl []report.NodeTiming
	origin := int64(-1)
	_, err := profile.ReadFile(filepath.Join("testdata", "providers", file), func(e *profile.Event) error {
		if !e.IsKernel() {
			return nil
		}
		if origin < 0 {
			origin = e.TS
		}
		tl = append(tl, report.NodeTiming{
			Name: e.NodeName(), OpType: e.OpName, Provider: e.Provider,
			StartS: float64(e.TS-origin) / 1e6, DurS: float64(e.Dur) / 1e6,
			InputShapes: shapeStrs(e.InputShapes), OutputShapes: shapeStrs(e.OutputShapes),
			ActivationSize: e.ActivationSize, ParameterSize: e.ParameterSize, OutputSize: e.OutputSize,
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl) == 0 {
		t.Fatalf("%s: no kernel events", file)
	}
	return tl
}

func shapeStrs(ts []profile.TypeShape) []string {
	var out []string
	for _, s := range ts {
		out = append(out, s.String())
	}
	return out
}

func ruleIDs(fs []report.Finding) map[string]report.Finding {
	out := map[string]report.Finding{}
	for _, f := range fs {
		out[f.Rule] = f
	}
	return out
}

func TestPlacementCUDAMnist(t *testing.T) {
	tl := profileTimeline(t, "cuda_mnist.json")
	req := []string{"CUDAExecutionProvider", CPUProvider}
	p := Placement(req, tl)
	if p.Nodes != 8 || len(p.ByProvider) != 1 || p.ByProvider[0].Provider != "CUDAExecutionProvider" || p.ByProvider[0].Nodes != 8 || !near(p.ByProvider[0].Share, 1) {
		t.Fatalf("by provider = %+v", p.ByProvider)
	}
	if !near(p.TimeS, 265e-6) {
		t.Errorf("time = %v, want 265 µs", p.TimeS)
	}
	if p.Fallback == nil || p.Fallback.Nodes != 0 || len(p.Fallback.ByOpType) != 0 {
		t.Errorf("fallback = %+v, want present and empty (a GPU provider was requested)", p.Fallback)
	}
	if p.Copies.Nodes != 0 || p.Copies.Bytes != 0 || len(p.Copies.List) != 0 {
		t.Errorf("copies = %+v", p.Copies)
	}
	f := timeline(tl...)
	f.RequestedProviders = req
	for id := range ruleIDs(Findings(f)) {
		if id == "cpu-fallback" || id == "memcpy-transitions" {
			t.Errorf("finding %s on a run with every node on CUDA", id)
		}
	}
}

func TestPlacementWebGPUFallback(t *testing.T) {
	tl := profileTimeline(t, "webgpu_fallback.json")
	req := []string{"WebGpuExecutionProvider", CPUProvider}
	p := Placement(req, tl)
	if p.Nodes != 12 {
		t.Fatalf("nodes = %d, want 12", p.Nodes)
	}
	total := 11715e-6 // the sum of the 12 durations
	if !near(p.TimeS, total) {
		t.Errorf("time = %v, want %v", p.TimeS, total)
	}
	want := map[string]int{"WebGpuExecutionProvider": 8, CPUProvider: 4}
	for _, r := range p.ByProvider {
		if want[r.Provider] != r.Nodes {
			t.Errorf("%s: %d nodes, want %d", r.Provider, r.Nodes, want[r.Provider])
		}
		delete(want, r.Provider)
	}
	if len(want) != 0 {
		t.Errorf("providers missing: %v", want)
	}

	// Unsqueeze, Cast and Min fell back; Shape (int64 output) is shape
	// arithmetic; the Memcpy nodes are copies.
	fb := p.Fallback
	if fb == nil || fb.Nodes != 3 || fb.ShapeNodes != 1 || !near(fb.TimeS, 85e-6) || !near(fb.Share, 85e-6/total) {
		t.Fatalf("fallback = %+v, want 3 nodes, 1 shape node, 85 µs", fb)
	}
	ops := map[string]int{}
	for _, o := range fb.ByOpType {
		ops[o.OpType] = o.Nodes
	}
	if len(ops) != 3 || ops["Unsqueeze"] != 1 || ops["Cast"] != 1 || ops["Min"] != 1 || fb.ByOpType[0].OpType != "Unsqueeze" {
		t.Errorf("fallback op types = %+v", fb.ByOpType)
	}

	c := p.Copies
	if c.Nodes != 3 || c.Bytes != 65+65+4 || c.UnknownBytesNodes != 0 || !near(c.TimeS, (10274+37+36)*1e-6) {
		t.Fatalf("copies = %+v, want 3 nodes, 134 bytes, 10347 µs", c)
	}
	if len(c.ByKind) != 2 || c.ByKind[0].OpType != "MemcpyToHost" || c.ByKind[0].Direction != CopyDeviceToHost ||
		c.ByKind[0].Bytes != 65 || c.ByKind[0].Provider != "WebGpuExecutionProvider" ||
		c.ByKind[1].OpType != "MemcpyFromHost" || c.ByKind[1].Direction != CopyHostToDevice || c.ByKind[1].Nodes != 2 || c.ByKind[1].Bytes != 69 {
		t.Errorf("copy kinds = %+v", c.ByKind)
	}
	if len(c.List) != 3 || c.List[0].Name != "Memcpy_token_58" || c.List[0].Shape != "bool[65]" || c.List[0].Bytes != 65 || !near(c.List[0].DurS, 10274e-6) {
		t.Errorf("copy list = %+v", c.List)
	}

	f := timeline(tl...)
	f.RequestedProviders = req
	got := ruleIDs(Findings(f))
	fd, ok := got["cpu-fallback"]
	if !ok {
		t.Fatalf("no cpu-fallback finding: %+v", got)
	}
	// 85 µs of 11.7 ms: a real fallback, but a small one.
	if fd.Severity != SeverityLow || !strings.Contains(fd.Title, "3 of 12 nodes fell back") || !strings.Contains(fd.Detail, "Unsqueeze ×1") || !strings.Contains(fd.Detail, "is not counted: 1 node") {
		t.Errorf("cpu-fallback = %+v", fd)
	}
	mc, ok := got["memcpy-transitions"]
	if !ok {
		t.Fatalf("no memcpy-transitions finding: %+v", got)
	}
	if mc.Severity != SeverityHigh || !strings.Contains(mc.Title, "3 Memcpy transitions") || !strings.Contains(mc.Detail, "134 B") ||
		!strings.Contains(mc.Recommendation, "fell back") {
		t.Errorf("memcpy-transitions = %+v", mc)
	}
	for _, e := range mc.Evidence {
		if e.Name == "memcpy_bytes" && e.Value != 134 {
			t.Errorf("memcpy_bytes evidence = %v, want 134", e.Value)
		}
	}
}

// TestPlacementUnrecordedProvider: DirectML writes node events without a
// provider; those nodes are not CPU fallbacks.
func TestPlacementUnrecordedProvider(t *testing.T) {
	tl := profileTimeline(t, "dml_noargs.json")
	req := []string{"DmlExecutionProvider", CPUProvider}
	p := Placement(req, tl)
	if len(p.ByProvider) != 1 || p.ByProvider[0].Provider != "" || p.ByProvider[0].Nodes != 7 {
		t.Fatalf("by provider = %+v", p.ByProvider)
	}
	if p.Fallback == nil || p.Fallback.Nodes != 0 {
		t.Errorf("fallback = %+v, want none", p.Fallback)
	}
	f := timeline(tl...)
	f.RequestedProviders = req
	if fd, ok := ruleIDs(Findings(f))["cpu-fallback"]; ok {
		t.Errorf("nodes without a recorded provider counted as CPU fallback: %+v", fd)
	}
}

func TestPlacementCPUOnly(t *testing.T) {
	tl := []report.NodeTiming{node("Conv", cpuEP, 1e-3), node("Relu", cpuEP, 1e-3)}
	p := Placement([]string{cpuEP}, tl)
	if p.Fallback != nil {
		t.Errorf("fallback = %+v, want none when only the CPU was requested", p.Fallback)
	}
	if Placement(nil, nil) != nil {
		t.Error("an empty timeline has a placement")
	}
}

func TestCopyBytes(t *testing.T) {
	n := func(out int64, act int64, shapes ...string) report.NodeTiming {
		return report.NodeTiming{OpType: "MemcpyFromHost", OutputSize: out, ActivationSize: act, OutputShapes: shapes}
	}
	tests := []struct {
		name string
		n    report.NodeTiming
		want int64
	}{
		{"output_size", n(1228800, 999, "float[1,3,320,320]"), 1228800},
		{"empty tensor", n(0, -1, "float[0,3]"), 0},
		{"from float shape", n(-1, -1, "float[1,3,320,320]"), 1228800},
		{"from float16 shape", n(-1, -1, "MLFloat16[2,8]"), 32},
		{"from two shapes", n(-1, -1, "int64[4]", "bool[3]"), 35},
		{"from activation", n(-1, 64, "string[4]"), 64},
		{"unknown", n(-1, -1), -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CopyBytes(tc.n); got != tc.want {
				t.Errorf("CopyBytes = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestCopyDirection(t *testing.T) {
	for op, want := range map[string]string{"MemcpyFromHost": CopyHostToDevice, "MemcpyToHost": CopyDeviceToHost, "Memcpy": CopyOther} {
		if got := CopyDirection(op); got != want {
			t.Errorf("CopyDirection(%q) = %q, want %q", op, got, want)
		}
	}
}

// TestPlacementRealCPUProfile benches Silero VAD (whose If subgraphs nest
// nodes) with --provider cpu through real ONNX Runtime: every node is on
// the CPU provider, there are no copies, and no provider finding fires.
func TestPlacementRealCPUProfile(t *testing.T) {
	testenv.RequireORT(t)
	model := testenv.Model(t, "silero_vad_v5.onnx")
	cpu, err := bench.ParseProvider("cpu")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(context.Background(), bench.Config{ModelPath: model, Shapes: map[string][]int64{"input": {1, 512}, "state": {2, 1, 128}}, Values: map[string]string{"sr": "16000"}, Runs: 3, Warmup: 1, ProfileRuns: 1, Seed: 1,
		Session: bench.SessionOptions{Providers: []bench.Provider{cpu}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Operators == nil || len(rep.Operators.Timeline) == 0 {
		t.Fatalf("no operator timeline: %+v", rep.Operators)
	}
	a, err := Analyze(context.Background(), rep, Config{PeakFLOPs: 1e11, PeakBandwidth: 1e10, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p := a.Providers
	if p == nil {
		t.Fatal("no placement in the analysis")
	}
	if len(p.ByProvider) != 1 || p.ByProvider[0].Provider != cpuEP || p.ByProvider[0].Nodes != len(rep.Operators.Timeline) || p.Nodes != len(rep.Operators.Timeline) {
		t.Errorf("by provider = %+v, want all %d nodes on the CPU", p.ByProvider, len(rep.Operators.Timeline))
	}
	if p.Fallback != nil || p.Copies.Nodes != 0 || p.Copies.Bytes != 0 {
		t.Errorf("fallback %+v, copies %+v: want none", p.Fallback, p.Copies)
	}
	for _, f := range a.Findings {
		if f.Rule == "cpu-fallback" || f.Rule == "memcpy-transitions" {
			t.Errorf("false finding on a CPU-only run: %+v", f)
		}
	}
	var buf strings.Builder
	if err := report.WriteAnalysisText(&buf, &report.Report{Analysis: a}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "all nodes on CPUExecutionProvider, no memory copies") {
		t.Errorf("text report:\n%s", buf.String())
	}
}

// FuzzPlacement: whatever the profile holds, Placement does not panic and
// its rows add up: provider rows cover every node and the run's time,
// fallback and copies are parts of the run, shares lie in [0, 1].
func FuzzPlacement(f *testing.F) {
	f.Add("Conv", cpuEP, "MemcpyFromHost", "CUDAExecutionProvider", "float[1,3]", int64(12), int64(-1), 1e-3, 2e-3, true)
	f.Add("Shape", cpuEP, "MemcpyToHost", "", "int64[4]", int64(-1), int64(-1), 0.0, 1e-6, false)
	f.Add("", "", "Memcpy", "WebGpuExecutionProvider", "bool[", int64(0), int64(7), 5e-4, 0.0, true)
	f.Fuzz(func(t *testing.T, op1, prov1, op2, prov2, shape string, out, act int64, d1, d2 float64, accel bool) {
		if !(d1 >= 0 && d1 < 1e3) || !(d2 >= 0 && d2 < 1e3) {
			t.Skip()
		}
		tl := []report.NodeTiming{
			{Name: "a", OpType: op1, Provider: prov1, DurS: d1, OutputShapes: []string{shape}, OutputSize: out, ActivationSize: act},
			{Name: "b", OpType: op2, Provider: prov2, DurS: d2, OutputShapes: []string{shape}, OutputSize: out, ActivationSize: act},
			{Name: "c", OpType: op1, Provider: prov2, DurS: d2, OutputSize: -1, ActivationSize: -1},
		}
		req := []string{cpuEP}
		if accel {
			req = []string{"CUDAExecutionProvider", cpuEP}
		}
		p := Placement(req, tl)
		nodes, tm := 0, 0.0
		for _, r := range p.ByProvider {
			nodes += r.Nodes
			tm += r.TimeS
			if r.Share < 0 || r.Share > 1+1e-9 {
				t.Errorf("provider share %v", r.Share)
			}
		}
		if nodes != len(tl) || p.Nodes != len(tl) || !near(tm, p.TimeS) {
			t.Errorf("rows cover %d nodes, %v s; run %d nodes, %v s", nodes, tm, p.Nodes, p.TimeS)
		}
		if (p.Fallback != nil) != accel {
			t.Errorf("fallback %+v with accel %v", p.Fallback, accel)
		}
		if fb := p.Fallback; fb != nil && (fb.Nodes+fb.ShapeNodes > len(tl) || fb.Share < 0 || fb.Share > 1+1e-9) {
			t.Errorf("fallback %+v", fb)
		}
		c := p.Copies
		if c.Nodes != len(c.List) || c.Nodes > len(tl) || c.Bytes < 0 || c.Share < 0 || c.Share > 1+1e-9 || c.UnknownBytesNodes > c.Nodes {
			t.Errorf("copies %+v", c)
		}
	})
}
