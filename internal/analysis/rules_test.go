package analysis

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/test/testenv"
)

const cpuEP = "CPUExecutionProvider"

func node(op, provider string, dur float64) report.NodeTiming {
	return report.NodeTiming{Name: op + "_node", OpType: op, Provider: provider, DurS: dur,
		InputShapes: []string{"float[1,16,64,64]"}, OutputShapes: []string{"float[1,16,64,64]"}, ActivationSize: 262144, OutputSize: 262144}
}

func convNode(dur float64) report.NodeTiming {
	return report.NodeTiming{Name: "conv", OpType: "Conv", Provider: cpuEP, DurS: dur,
		InputShapes: []string{"float[1,64,64,64]", "float[64,64,3,3]", "float[64]"}, OutputShapes: []string{"float[1,64,64,64]"},
		ActivationSize: 1048576, ParameterSize: 147712, OutputSize: 1048576}
}

// timeline returns facts for a profiled run of the given nodes.
func timeline(nodes ...report.NodeTiming) *Facts {
	f := &Facts{RequestedProviders: []string{cpuEP}, Batch: 1, Timeline: nodes, Peaks: fixedPeaks}
	f.Roofline = Roofline(&report.Operators{Timeline: nodes}, fixedPeaks)
	return f
}

func repeat(n int, nodes ...report.NodeTiming) []report.NodeTiming {
	var out []report.NodeTiming
	for range n {
		out = append(out, nodes...)
	}
	return out
}

func latency(p50, p99, mean, std float64, n int) stats.Summary {
	return stats.Summary{Count: n, P50: p50, P99: p99, Mean: mean, Std: std, Max: p99 * 1.1}
}

const (
	trtEP  = "TensorrtExecutionProvider"
	cudaEP = "CUDAExecutionProvider"
)

func TestRules(t *testing.T) {
	quiet := func() *Facts {
		f := timeline(repeat(10, convNode(1e-3), node("Relu", cpuEP, 1e-5))...)
		f.Latency = latency(0.010, 0.011, 0.010, 0.0003, 100)
		f.FirstRunS, f.SessionCreationS = 0.015, 0.1
		return f
	}
	ip := func(v int) *int { return &v }
	fp := func(v float64) *float64 { return &v }
	tests := []struct {
		rule    string
		fires   func() *Facts
		silent  func() *Facts
		wantSev string
		want    []string // substrings of title+detail+recommendation
	}{
		{"dominant-op-type",
			func() *Facts { return quiet() }, // Conv is 99% of the time
			func() *Facts {
				return timeline(repeat(5, convNode(1e-3), node("Add", cpuEP, 1e-3), node("Mul", cpuEP, 1e-3), node("Transpose", cpuEP, 1e-3))...)
			},
			SeverityHigh, []string{"Conv takes", "compute-bound"}},
		{"cpu-fallback",
			func() *Facts {
				f := timeline(node("Conv", "CUDAExecutionProvider", 1e-3), node("NonZero", cpuEP, 1e-3), node("Conv", "CUDAExecutionProvider", 1e-3))
				f.RequestedProviders = []string{"CUDAExecutionProvider", cpuEP}
				return f
			},
			func() *Facts {
				// Shape arithmetic on the CPU is by design, not a fallback.
				shape := node("Shape", cpuEP, 1e-5)
				shape.OutputShapes = []string{"int64[4]"}
				f := timeline(node("Conv", "CUDAExecutionProvider", 1e-3), shape)
				f.RequestedProviders = []string{"CUDAExecutionProvider", cpuEP}
				return f
			},
			SeverityHigh, []string{"1 of 3 nodes fell back", "NonZero", "CUDAExecutionProvider"}},
		{"partial-offload",
			func() *Facts {
				// TensorRT took the convolutions; two Resize nodes went to
				// CUDA; the copy feeding them is not counted.
				f := timeline(node("TRTKernel_graph_0", trtEP, 6e-3), node("Resize", cudaEP, 1e-3), node("MemcpyToHost", cudaEP, 1e-3),
					node("Resize", cudaEP, 1e-3), node("TRTKernel_graph_1", trtEP, 5e-4))
				f.RequestedProviders = []string{trtEP, cudaEP, cpuEP}
				return f
			},
			func() *Facts {
				// CUDA alone requested: its nodes are where they were asked to be.
				f := timeline(node("Conv", cudaEP, 6e-3), node("Resize", cudaEP, 1e-3))
				f.RequestedProviders = []string{cudaEP, cpuEP}
				return f
			},
			SeverityHigh, []string{"2 of 5 nodes ran on CUDAExecutionProvider instead of TensorrtExecutionProvider (21.1% of operator time)", "Resize ×2", "trt_min_subgraph_size", "op_types=2 Resize"}},
		{"memcpy-transitions",
			func() *Facts {
				return timeline(node("MemcpyFromHost", cpuEP, 1e-3), node("Conv", "CUDAExecutionProvider", 5e-3), node("MemcpyToHost", cpuEP, 1e-3))
			},
			func() *Facts { return timeline(node("Conv", "CUDAExecutionProvider", 5e-3)) },
			SeverityHigh, []string{"2 Memcpy transitions", "IO binding"}}, // 2 of 7 ms
		{"thread-imbalance",
			func() *Facts {
				n := convNode(1e-3)
				n.Threads, n.Imbalance = 4, 2.5
				return timeline(n, convNode(1e-3))
			},
			func() *Facts {
				n := convNode(1e-3)
				n.Threads, n.Imbalance = 4, 1.1
				return timeline(n, convNode(1e-3))
			},
			SeverityMedium, []string{"Uneven intra-op", "2.5×", "physical cores"}},
		{"memory-bound-hot-ops",
			func() *Facts {
				return timeline(repeat(5, convNode(1e-3), node("Add", cpuEP, 1e-3), node("Clip", cpuEP, 1e-3), node("Mul", cpuEP, 1e-3), node("Div", cpuEP, 1e-3))...)
			},
			func() *Facts { return quiet() },
			SeverityHigh, []string{"Memory-bound op types take 80.0%", "chains of 3", "Fuse the element-wise chains"}},
		{"dequantize-weights",
			func() *Facts {
				dq := node("DequantizeLinear", cpuEP, 1e-3)
				return timeline(repeat(5, dq, node("MatMul", cpuEP, 2e-3))...)
			},
			func() *Facts {
				return timeline(repeat(5, node("DequantizeLinear", cpuEP, 1e-5), node("MatMul", cpuEP, 2e-3))...)
			},
			SeverityHigh, []string{"Dequantizing weights takes 33.3% of operator time (5 DequantizeLinear nodes)", "no integer kernels", "MatMulNBits"}},
		{"overhead-bound-ops",
			func() *Facts {
				// Shape arithmetic on a few bytes: 100 µs for 96 bytes is
				// far under 2% of the 10 GB/s roof.
				tiny := func(op string) report.NodeTiming {
					n := node(op, cpuEP, 1e-4)
					n.InputShapes, n.OutputShapes, n.ActivationSize, n.OutputSize = []string{"float[1,1,16]"}, []string{"float[1,16]"}, 64, 64
					return n
				}
				return timeline(repeat(5, convNode(1e-3), tiny("Squeeze"), tiny("Unsqueeze"), tiny("Reshape"))...)
			},
			// The same op types moving 512 KiB per node at 5% of the roof:
			// memory-bound, not overhead-bound.
			func() *Facts {
				return timeline(repeat(5, convNode(1e-3), node("Squeeze", cpuEP, 1e-3), node("Unsqueeze", cpuEP, 1e-3), node("Reshape", cpuEP, 1e-3))...)
			},
			SeverityMedium, []string{"Per-node overhead bounds op types taking 23.1%", "Squeeze, Unsqueeze, Reshape", "Run fewer nodes"}},
		{"layout-reorder",
			func() *Facts {
				return timeline(repeat(5, node("ReorderInput", cpuEP, 1e-3), convNode(2e-3), node("ReorderOutput", cpuEP, 1e-3))...)
			},
			func() *Facts { return timeline(repeat(5, node("ReorderInput", cpuEP, 1e-5), convNode(2e-3))...) },
			SeverityHigh, []string{"Layout conversions take 50.0%", "NCHWc"}},
		{"high-jitter",
			func() *Facts {
				f := quiet()
				f.Latency = latency(0.010, 0.018, 0.011, 0.002, 100)
				f.CPUUtilization = fp(0.97)
				return f
			},
			func() *Facts {
				f := quiet()
				f.Latency = latency(0.010, 0.018, 0.011, 0.002, 10) // too few runs to judge
				return f
			},
			SeverityMedium, []string{"p99 is 1.80× p50", "CPUs were 97.0% busy", "cpu_utilization=97%"}},
		{"long-warmup",
			func() *Facts {
				f := quiet()
				f.RunsToStable = ip(25)
				f.WarmupExcessS = fp(0.2)
				return f
			},
			func() *Facts {
				// 25 runs to settle, but at no extra cost: the steady-state
				// test was delayed by noise, not by a slow warm-up.
				f := quiet()
				f.RunsToStable = ip(25)
				f.WarmupExcessS = fp(0)
				return f
			},
			SeverityLow, []string{"25 runs to settle", "warm-up inferences"}},
		{"better-batch-size",
			func() *Facts {
				f := quiet()
				f.Batches = []BatchPoint{{1, 100, 0.01, 0.012}, {4, 180, 0.022, 0.025}, {8, 150, 0.05, 0.06}}
				return f
			},
			func() *Facts {
				f := quiet()
				f.Batches = []BatchPoint{{1, 100, 0.01, 0.012}, {4, 110, 0.036, 0.04}}
				return f
			},
			SeverityMedium, []string{"Batch size 4 gives 1.80×", "batch requests up to 4"}},
		{"thermal-throttling",
			func() *Facts {
				f := quiet()
				f.TemperatureMarginC = fp(2)
				f.Throttle = []string{"gpu0: sw_thermal_slowdown"}
				return f
			},
			func() *Facts {
				f := quiet()
				f.TemperatureMarginC = fp(30)
				f.CPUFrequencyDrop = fp(0.02)
				return f
			},
			SeverityHigh, []string{"throttling", "within 2 °C", "sw_thermal_slowdown"}},
		{"gpu-underused",
			func() *Facts {
				f := quiet()
				f.RequestedProviders = []string{"CUDAExecutionProvider", cpuEP}
				f.GPUUtilization = fp(0.2)
				return f
			},
			func() *Facts {
				f := quiet()
				f.RequestedProviders = []string{"CUDAExecutionProvider", cpuEP}
				f.GPUUtilization = fp(0.9)
				return f
			},
			SeverityHigh, []string{"busy only 20.0%"}},
		{"control-flow",
			func() *Facts {
				// A Loop whose own time (6 ms) exceeds its body's (2 × 2 ms).
				loop := report.NodeTiming{Name: "loop", OpType: "Loop", Provider: cpuEP, DurS: 10e-3, SubgraphS: 4e-3}
				c1, c2 := convNode(2e-3), convNode(2e-3)
				c1.StartS, c2.StartS, c1.Depth, c2.Depth, c2.Name = 1e-3, 4e-3, 1, 1, "conv2"
				return timeline(loop, c1, c2)
			},
			func() *Facts {
				// The same body with 0.1 ms of Loop time, beside 20 ms of
				// main-graph Conv.
				loop := report.NodeTiming{Name: "loop", OpType: "Loop", Provider: cpuEP, DurS: 4.1e-3, SubgraphS: 4e-3}
				c1, c2, main := convNode(2e-3), convNode(2e-3), convNode(20e-3)
				c1.StartS, c2.StartS, c1.Depth, c2.Depth, main.StartS = 1e-3, 3e-3, 1, 1, 5e-3
				return timeline(loop, c1, c2, main)
			},
			SeverityHigh, []string{"loop with its subgraphs takes 100.0% of operator time, 60.0% of it the Loop nodes' own time", "Conv 40.0%", "2 nodes per run"}},
		{"compute-far-below-peak",
			// 302 MFLOP Conv nodes: 50 ms is 6 GFLOP/s, 6% of the
			// 100 GFLOP/s roof; 10 ms is 30%.
			func() *Facts { return timeline(repeat(3, convNode(50e-3), node("Relu", cpuEP, 1e-3))...) },
			func() *Facts { return timeline(repeat(3, convNode(10e-3), node("Relu", cpuEP, 1e-3))...) },
			SeverityHigh, []string{"far below peak FLOP/s take 98.0% of operator time (3 Conv under 10% of the compute roof)", "at 6.0% of peak", "thread count"}},
		{"unfused-attention",
			func() *Facts { return timeline(attentionBlock("/l0/attn/", false)...) },
			func() *Facts { return timeline(attentionBlock("/l0/attn/", true)...) },
			SeverityHigh, []string{"1 attention block run as 6 nodes taking 94.1% of operator time", "Softmax", "4 heads of 16, hidden size 64"}},
		{"qdq-pairs",
			func() *Facts {
				q := report.NodeTiming{Name: "q", OpType: "QuantizeLinear", Provider: cpuEP, DurS: 1e-3, OutputShapes: []string{"uint8[1,64]"}}
				dq := report.NodeTiming{Name: "dq", OpType: "DequantizeLinear", Provider: cpuEP, DurS: 1e-3, InputShapes: []string{"uint8[1,64]", "float[]"}}
				return timeline(q, dq, node("Exp", cpuEP, 2e-3))
			},
			func() *Facts {
				// A stored weight's DequantizeLinear is no pair.
				q := report.NodeTiming{Name: "q", OpType: "QuantizeLinear", Provider: cpuEP, DurS: 1e-3, OutputShapes: []string{"uint8[1,64]"}}
				dq := report.NodeTiming{Name: "dq", OpType: "DequantizeLinear", Provider: cpuEP, DurS: 1e-3, InputShapes: []string{"uint8[1,64]", "float[]"}, ParameterSize: 64}
				return timeline(q, dq, node("Exp", cpuEP, 2e-3))
			},
			SeverityHigh, []string{"1 QuantizeLinear → DequantizeLinear pair left unfused take 50.0% of operator time", "q → dq", "1 Exp"}},
		{"partial-roofline",
			func() *Facts { return timeline(convNode(1e-3), node("Resize", cpuEP, 1e-3), node("LSTM", cpuEP, 1e-3)) },
			func() *Facts { return quiet() },
			SeverityInfo, []string{"covers 33.3%", "LSTM, Resize"}},
	}
	byID := map[string]Rule{}
	for _, r := range Rules() {
		byID[r.ID] = r
	}
	if len(tests) != len(byID) {
		t.Errorf("%d rules, %d tested", len(byID), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r, ok := byID[tt.rule]
			if !ok {
				t.Fatalf("no rule %q", tt.rule)
			}
			if r.Doc == "" {
				t.Error("rule has no doc")
			}
			fd := r.Check(tt.fires())
			if fd == nil {
				t.Fatal("did not fire on its trigger fixture")
			}
			if fd.Rule != tt.rule || fd.Severity != tt.wantSev {
				t.Errorf("rule %q severity %q, want %q %q", fd.Rule, fd.Severity, tt.rule, tt.wantSev)
			}
			if len(fd.Evidence) == 0 || fd.Title == "" || fd.Detail == "" || fd.Recommendation == "" {
				t.Errorf("incomplete finding: %+v", fd)
			}
			if fd.Impact < 0 || fd.Impact > 1 {
				t.Errorf("impact %g outside [0,1]", fd.Impact)
			}
			all := fd.Title + " | " + fd.Detail + " | " + fd.Recommendation + " | " + strings.Join(EvidenceStrings(fd.Evidence), " ")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("finding lacks %q:\n%s", w, all)
				}
			}
			if fd := r.Check(tt.silent()); fd != nil {
				t.Errorf("fired on its quiet fixture: %s", fd.Title)
			}
		})
	}
}

func TestRulesOnEmptyFacts(t *testing.T) {
	if got := Findings(&Facts{}); len(got) != 0 {
		t.Errorf("findings on empty facts: %+v", got)
	}
}

func TestFindingsRanked(t *testing.T) {
	f := timeline(repeat(5, node("ReorderInput", cpuEP, 1e-3), convNode(2e-3), node("ReorderOutput", cpuEP, 1e-3), node("Resize", cpuEP, 4e-3))...)
	f.Latency = latency(0.010, 0.018, 0.011, 0.002, 100)
	got := Findings(f)
	if len(got) < 3 {
		t.Fatalf("findings: %+v", got)
	}
	rank := map[string]int{SeverityHigh: 0, SeverityMedium: 1, SeverityLow: 2, SeverityInfo: 3}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if rank[a.Severity] > rank[b.Severity] || rank[a.Severity] == rank[b.Severity] && a.Impact < b.Impact {
			t.Errorf("finding %d (%s %s %.2f) ranked above %d (%s %s %.2f)", i-1, a.Rule, a.Severity, a.Impact, i, b.Rule, b.Severity, b.Impact)
		}
	}
}

func TestFactsFromLoadSections(t *testing.T) {
	rep := &report.Report{
		Config:  report.Config{Batch: 2},
		Latency: report.Latency{Summary: latency(0.01, 0.012, 0.01, 0.001, 50)},
		Warmup:  &report.Warmup{CurveS: []float64{0.2, 0.05, 0.02, 0.01}, Runs: 3, Steady: true, SteadyAfterRuns: 2, SteadyS: 0.25, SteadyMedianS: 0.01},
		Jitter:  &report.Jitter{OutlierCount: 4},
		BatchSweep: &report.BatchSweep{BestBatch: 4, Steps: []report.BatchStep{
			{Batch: 2, ItemsPerS: 100, Latency: stats.Summary{P50: 0.02, P99: 0.03}},
			{Batch: 4, ItemsPerS: 150, Latency: stats.Summary{P50: 0.027, P99: 0.04}},
			{Batch: 8, ItemsPerS: 160, Latency: stats.Summary{P50: 0.05, P99: 0.09}},
		}},
	}
	f := FactsFrom(rep, nil, nil)
	if f.RunsToStable == nil || *f.RunsToStable != 2 || f.WarmupExcessS == nil || !near(*f.WarmupExcessS, 0.23) {
		t.Errorf("warm-up facts: %v %v", deref2(f.RunsToStable), deref(f.WarmupExcessS))
	}
	if f.Outliers == nil || *f.Outliers != 4 || len(f.Batches) != 3 || f.BestBatch != 4 {
		t.Errorf("load facts: %+v", f)
	}
	// The sweep's own choice (4, under its SLA) wins over the raw maximum (8).
	var fd *report.Finding
	for _, r := range Rules() {
		if r.ID == "better-batch-size" {
			fd = r.Check(f)
		}
	}
	if fd == nil || !strings.Contains(fd.Title, "Batch size 4") {
		t.Errorf("batch finding = %+v", fd)
	}
	rep.Warmup.Steady = false
	if f := FactsFrom(rep, nil, nil); *f.RunsToStable != 4 || f.WarmupExcessS != nil {
		t.Errorf("unsteady warm-up: %v", *f.RunsToStable)
	}
}

func deref2(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestOverheadBoundOnRealVAD: on a real `ortel bench silero-vad` report
// (testdata/vad_report.json.gz, this project's 2-core build machine, ORT
// 1.30.0), the shape-arithmetic op types, whose nodes reach about 1% of
// their L1 roof, are overhead-bound, the overhead finding names them,
// and the memory-bound finding (fusing advice) does not.
func TestOverheadBoundOnRealVAD(t *testing.T) {
	rep := *profiledFixture(t, "testdata/vad_report.json.gz")
	peaks := rep.Analysis.Peaks
	roof := RooflineThreads(rep.Operators, peaks, rep.Config.IntraOpThreads)
	bound := map[string]string{}
	for _, ot := range roof.ByOpType {
		bound[ot.OpType] = ot.Bound
	}
	shapeOps := []string{"Squeeze", "Unsqueeze", "Shape", "Gather"}
	for _, op := range shapeOps {
		t.Run(op, func(t *testing.T) {
			if bound[op] != BoundOverhead {
				t.Errorf("%s is %q-bound, want %q", op, bound[op], BoundOverhead)
			}
		})
	}
	if bound["FusedConv"] != BoundCompute {
		t.Errorf("FusedConv is %q-bound, want compute", bound["FusedConv"])
	}
	found := map[string]report.Finding{}
	for _, fd := range Findings(FactsFrom(&rep, roof, peaks)) {
		found[fd.Rule] = fd
	}
	over, ok := found["overhead-bound-ops"]
	if !ok {
		t.Fatalf("no overhead-bound finding; findings: %v", found)
	}
	for _, op := range shapeOps {
		if !strings.Contains(over.Title, op) {
			t.Errorf("the overhead finding does not name %s: %q", op, over.Title)
		}
		if mem, ok := found["memory-bound-hot-ops"]; ok && strings.Contains(mem.Title, op) {
			t.Errorf("the memory-bound finding still names %s: %q", op, mem.Title)
		}
	}
}

// TestDominantOverheadBoundAdvice: a dominant op type whose nodes are
// overhead-bound gets the fewer-nodes advice, not the generic line.
func TestDominantOverheadBoundAdvice(t *testing.T) {
	tiny := node("Squeeze", cpuEP, 1e-4)
	tiny.InputShapes, tiny.OutputShapes, tiny.ActivationSize, tiny.OutputSize = []string{"float[1,1,16]"}, []string{"float[1,16]"}, 64, 64
	f := timeline(repeat(10, tiny)...)
	var fd *report.Finding
	for _, r := range Rules() {
		if r.ID == "dominant-op-type" {
			fd = r.Check(f)
		}
	}
	if fd == nil {
		t.Fatal("dominant-op-type did not fire on a Squeeze-only timeline")
	}
	for _, want := range []string{"overhead-bound", "Run fewer of them"} {
		if !strings.Contains(fd.Detail+fd.Recommendation, want) {
			t.Errorf("dominant finding lacks %q: %s / %s", want, fd.Detail, fd.Recommendation)
		}
	}
}

// TestDequantizeOnRealMoonshineDecoder: on a real `ortel bench --generate
// 32 --prompt-tokens 4 moonshine-tiny` report (the quantized decoder,
// testdata/moonshine_decoder_report.json.gz, this project's build
// machine), DequantizeLinear's share of operator time fires the
// dequantize-weights finding with the share the tables print.
func TestDequantizeOnRealMoonshineDecoder(t *testing.T) {
	rep := *profiledFixture(t, "testdata/moonshine_decoder_report.json.gz")
	var want float64
	for _, ot := range rep.Operators.ByType {
		if ot.OpType == "DequantizeLinear" {
			want += ot.Share
		}
	}
	if want < DequantizeShare {
		t.Fatalf("DequantizeLinear is %.1f%% of the fixture's operator time: it no longer tests the rule", 100*want)
	}
	peaks := rep.Analysis.Peaks
	roof := RooflineThreads(rep.Operators, peaks, rep.Config.IntraOpThreads)
	for _, fd := range Findings(FactsFrom(&rep, roof, peaks)) {
		if fd.Rule != "dequantize-weights" {
			continue
		}
		if math.Abs(fd.Impact-want) > 1e-9 {
			t.Errorf("impact %v, want the top-operators share %v", fd.Impact, want)
		}
		if !strings.Contains(fd.Title, "DequantizeLinear node") {
			t.Errorf("title %q", fd.Title)
		}
		return
	}
	t.Fatal("no dequantize-weights finding on the quantized decoder")
}

// profiledFixture reads a real report (gzipped JSON) with its operators
// and peaks.
func profiledFixture(t *testing.T, path string) *report.Report {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal(testenv.Gunzip(t, path), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Operators == nil || rep.Analysis == nil || rep.Analysis.Peaks == nil {
		t.Fatalf("%s lacks its operators or peaks", path)
	}
	return &rep
}

// attentionBlock is one attention block's nodes in a scope: a weight
// projection, the score MatMul, Softmax, the value MatMul and layout
// nodes; fused, ONNX Runtime's Attention node runs it instead.
func attentionBlock(scope string, fused bool) []report.NodeTiming {
	n := func(name, op string, dur float64, in ...string) report.NodeTiming {
		return report.NodeTiming{Name: scope + name, OpType: op, Provider: cpuEP, DurS: dur, InputShapes: in, OutputShapes: []string{"float[1,4,8,16]"}}
	}
	proj := n("q_proj/MatMul", "MatMul", 1e-4, "float[1,8,64]", "float[64,64]")
	proj.ParameterSize = 16384
	nodes := []report.NodeTiming{proj}
	if fused {
		// A fused kernel in the scope: what is left is not attention
		// run as separate nodes.
		nodes = append(nodes, n("Attention", "Attention", 1e-3, "float[1,8,64]"))
	}
	return append(nodes,
		n("Reshape", "Reshape", 2e-4, "float[1,8,64]"), n("Transpose", "Transpose", 2e-4, "float[1,8,4,16]"),
		n("MatMul", "MatMul", 3e-4, "float[1,4,8,16]", "float[1,4,16,8]"), n("Softmax", "Softmax", 2e-4, "float[1,4,8,8]"),
		n("MatMul_1", "MatMul", 3e-4, "float[1,4,8,8]", "float[1,4,8,16]"), n("Transpose_1", "Transpose", 4e-4, "float[1,4,8,16]"))
}
