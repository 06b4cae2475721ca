package analysis

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// fixedPeaks is a machine with a ridge point of 10 FLOP/byte.
var fixedPeaks = &report.Peaks{FLOPsPerS: 100e9, BytesPerS: 10e9, Ridge: 10, FLOPsSource: SourceFlag, BytesSource: SourceFlag}

func TestRooflineMath(t *testing.T) {
	ops := &report.Operators{Timeline: []report.NodeTiming{
		// 2·256·256·256 = 33.5 MFLOP over 3·256·256·4 = 786432 bytes: 42.7 FLOP/B,
		// compute-bound; 1 ms gives 33.5 GFLOP/s, 33.5% of 100 GFLOP/s.
		{Name: "mm", OpType: "MatMul", Provider: "CPUExecutionProvider", DurS: 1e-3,
			InputShapes: []string{"float[256,256]", "float[256,256]"}, OutputShapes: []string{"float[256,256]"},
			ActivationSize: 262144, ParameterSize: 262144, OutputSize: 262144},
		// 1e6 FLOP over 12e6 bytes: memory-bound; the roof at 1/12 FLOP/B is
		// 0.833 GFLOP/s; 2 ms gives 0.5 GFLOP/s: 60% of it.
		{Name: "add", OpType: "Add", Provider: "CPUExecutionProvider", DurS: 2e-3,
			InputShapes: []string{"float[1000000]", "float[1000000]"}, OutputShapes: []string{"float[1000000]"},
			ActivationSize: 8e6, OutputSize: 4e6},
		// Pure data movement: 8e6 bytes in 1 ms = 8 GB/s, 80% of the bandwidth.
		{Name: "t", OpType: "Transpose", Provider: "CPUExecutionProvider", DurS: 1e-3,
			InputShapes: []string{"float[1000,1000]"}, OutputShapes: []string{"float[1000,1000]"},
			ActivationSize: 4e6, OutputSize: 4e6},
		{Name: "r", OpType: "Resize", Provider: "CPUExecutionProvider", DurS: 1e-3,
			InputShapes: []string{"float[1,1,10,10]", "float[0]", "float[4]"}, OutputShapes: []string{"float[1,1,20,20]"},
			ActivationSize: 400, OutputSize: 1600},
	}}
	r := Roofline(ops, fixedPeaks)
	if r.Nodes != 4 || r.KnownNodes != 3 || !near(r.TimeS, 5e-3) || !near(r.KnownTimeShare, 0.8) {
		t.Fatalf("totals: %+v", r)
	}
	if len(r.UnknownOpTypes) != 1 || r.UnknownOpTypes[0] != "Resize" {
		t.Errorf("unknown op types = %v", r.UnknownOpTypes)
	}
	mm, add, tr, rs := r.Ops[0], r.Ops[1], r.Ops[2], r.Ops[3]
	check := func(name string, got *float64, want float64) {
		t.Helper()
		if got == nil || !near(*got, want) {
			t.Errorf("%s = %v, want %g", name, deref(got), want)
		}
	}
	check("mm intensity", mm.Intensity, 2*256*256*256/786432.0)
	check("mm FLOP/s", mm.FLOPsPerS, 2*256*256*256/1e-3)
	check("mm roof share", mm.RoofShare, 2*256*256*256/1e-3/100e9)
	if mm.Bound != BoundCompute || mm.Class != ClassMatMul {
		t.Errorf("mm: %+v", mm)
	}
	check("add roof share", add.RoofShare, 0.5e9/(1e6/12e6*10e9))
	if add.Bound != BoundMemory {
		t.Errorf("add bound %s", add.Bound)
	}
	check("transpose roof share", tr.RoofShare, 0.8)
	if tr.Bound != BoundMemory || *tr.FLOPs != 0 {
		t.Errorf("transpose: %+v", tr)
	}
	if rs.Bound != BoundUnknown || rs.FLOPs != nil || rs.RoofShare != nil || rs.Unknown == "" || rs.BytesPerS != 2e6 {
		t.Errorf("resize: %+v", rs)
	}
	// By op type, sorted by time: Add (2 ms) first.
	if r.ByOpType[0].OpType != "Add" || !near(r.ByOpType[0].Share, 0.4) {
		t.Errorf("by op type: %+v", r.ByOpType[0])
	}
	// Without peaks: rates and intensities, no classification.
	r = Roofline(ops, nil)
	if r.Ops[0].Bound != BoundUnknown || r.Ops[0].RoofShare != nil || r.Ops[0].Intensity == nil {
		t.Errorf("without peaks: %+v", r.Ops[0])
	}
	if Roofline(nil, fixedPeaks) != nil || Roofline(&report.Operators{}, fixedPeaks) != nil {
		t.Error("roofline of no timeline is not nil")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// profiledReport benches a generated model with real ONNX Runtime and one
// profiled run.
func profiledReport(t *testing.T, m onnxgen.Model, shapes map[string][]int64) *report.Report {
	t.Helper()
	testenv.RequireORT(t)
	p := filepath.Join(t.TempDir(), "m.onnx")
	if err := m.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(context.Background(), bench.Config{ModelPath: p, Shapes: shapes, Runs: 3, Warmup: 1, ProfileRuns: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Operators == nil || len(rep.Operators.Timeline) == 0 {
		t.Fatalf("no operator timeline: %+v", rep.Operators)
	}
	return rep
}

// TestRooflineClassifiesRealProfiles places the operators of real ONNX
// Runtime profiles: a stack of [512,512]x[512,512] dense layers is
// compute-bound (85 FLOP per byte, 128 when ONNX Runtime pre-packs the
// weight and leaves it out of parameter_size), a chain of element-wise Add/Mul
// over 1 Mi floats is memory-bound (1/8 FLOP per byte).
func TestRooflineClassifiesRealProfiles(t *testing.T) {
	dense := profiledReport(t, onnxgen.DynamicBatch(512, 2), map[string][]int64{"x": {512, 512}})
	ew := profiledReport(t, onnxgen.ElementwiseChain(4, 1<<20), nil)

	rd := Roofline(dense.Operators, fixedPeaks)
	var mmTime float64
	for _, op := range rd.Ops {
		t.Logf("dense: %s %s %s intensity %v", op.Name, op.OpType, op.Bound, deref(op.Intensity))
		if op.Class == ClassMatMul {
			mmTime += op.DurS
			if op.Bound != BoundCompute {
				t.Errorf("%s (%s) is %s-bound, want compute (intensity %v)", op.Name, op.OpType, op.Bound, deref(op.Intensity))
			}
			if op.Intensity == nil || *op.Intensity < 40 {
				t.Errorf("%s intensity %v, want 85 to 128", op.Name, deref(op.Intensity))
			}
		}
	}
	if mmTime == 0 {
		t.Fatal("no matrix product in the dense model's profile")
	}
	if rd.KnownTimeShare < 0.99 {
		t.Errorf("dense known time share %.2f, unknown %v", rd.KnownTimeShare, rd.UnknownOpTypes)
	}

	re := Roofline(ew.Operators, fixedPeaks)
	if len(re.Ops) != 8 {
		t.Errorf("element-wise chain: %d operators, want 8", len(re.Ops))
	}
	for _, op := range re.Ops {
		if op.Class != ClassElementwise || op.Bound != BoundMemory {
			t.Errorf("%s (%s): class %s, bound %s; want element-wise, memory", op.Name, op.OpType, op.Class, op.Bound)
		}
		if op.Intensity == nil || math.Abs(*op.Intensity-0.125) > 0.001 {
			t.Errorf("%s intensity %v, want 1/8 (1 FLOP per 4-byte read and 4-byte write)", op.Name, deref(op.Intensity))
		}
	}
	// Under roofs far below what they reached, every node of the real
	// profile is above its roof, and each says why.
	slow := levelPeaks()
	for i := range slow.Levels {
		slow.Levels[i].BytesPerS = 1e6
	}
	finishLevels(slow)
	rs := RooflineThreads(ew.Operators, slow, 0)
	for _, op := range rs.Ops {
		if op.RoofShare == nil || *op.RoofShare <= 1 || op.Roof == "" {
			t.Errorf("%s: roof %s, share %v; want above a 1 MB/s roof", op.Name, op.Roof, deref(op.RoofShare))
		}
	}
	checkAboveExplained(t, rs)
	// The same classification as measured by their aggregate.
	for _, ty := range re.ByOpType {
		if ty.Bound != BoundMemory {
			t.Errorf("op type %s: %s", ty.OpType, ty.Bound)
		}
	}
}

func BenchmarkRoofline(b *testing.B) {
	var tl []report.NodeTiming
	for i := range 400 {
		tl = append(tl, report.NodeTiming{Name: "n", OpType: []string{"Conv", "Add", "Mul", "ReorderInput"}[i%4], DurS: 1e-4,
			InputShapes: []string{"float[1,96,160,160]", "float[32,96,3,3]", "float[32]"}, OutputShapes: []string{"float[1,32,160,160]"},
			ActivationSize: 9830400, ParameterSize: 110720, OutputSize: 3276800})
	}
	ops := &report.Operators{Timeline: tl}
	b.ReportAllocs()
	for b.Loop() {
		Roofline(ops, fixedPeaks)
	}
}

// TestRooflineShareIsTopOperatorsShare: the roofline's per-type share is
// the top-operators table's (self time over all profiled runs), not the
// one timeline run's, so one op type shows one share everywhere; a
// report without per-type totals falls back to the run's share.
func TestRooflineShareIsTopOperatorsShare(t *testing.T) {
	const cpu = "CPUExecutionProvider"
	tl := []report.NodeTiming{
		{Name: "sq", OpType: "Squeeze", Provider: cpu, DurS: 0.029e-3},
		{Name: "mm", OpType: "MatMul", Provider: cpu, DurS: 0.971e-3},
	}
	byType := []report.OpType{
		{OpType: "MatMul", Provider: cpu, Share: 0.777},
		{OpType: "Squeeze", Provider: cpu, Share: 0.223},
	}
	for _, tc := range []struct {
		name   string
		byType []report.OpType
		want   map[string]float64
	}{
		{"over all profiled runs", byType, map[string]float64{"Squeeze": 0.223, "MatMul": 0.777}},
		{"one run when no totals", nil, map[string]float64{"Squeeze": 0.029, "MatMul": 0.971}},
		{"one run when the totals miss a type", byType[:1], map[string]float64{"Squeeze": 0.029, "MatMul": 0.971}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Roofline(&report.Operators{Timeline: tl, ByType: tc.byType, ProfiledRuns: 10}, fixedPeaks)
			for _, ot := range r.ByOpType {
				if !near(ot.Share, tc.want[ot.OpType]) {
					t.Errorf("%s share = %v, want %v", ot.OpType, ot.Share, tc.want[ot.OpType])
				}
			}
		})
	}
}
