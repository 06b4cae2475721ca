package analysis

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

func TestReadCacheLevels(t *testing.T) {
	tests := []struct {
		root    string
		want    []CacheLevel
		wantErr string
	}{
		{"epyc", []CacheLevel{{1, 32 << 10}, {2, 1 << 20}, {3, 32 << 20}}, ""},
		{"xeon", []CacheLevel{{1, 48 << 10}, {2, 2 << 20}, {3, 105 << 20}}, ""},
		{"tiny", []CacheLevel{{1, 4 << 10}, {2, 16 << 10}, {3, 64 << 10}}, ""},
		{"garbage", nil, `index0/size: "lots" is not a cache size`},
		{"badlevel", nil, `index0/level: "one" is not a cache level`},
		{"instruction-only", nil, "no data cache in"},
		{"nocache", nil, "no cache description in"},
		{"nosize", nil, "index0/size"},
		{"missing", nil, "no cache description in"},
	}
	for _, tt := range tests {
		t.Run(tt.root, func(t *testing.T) {
			got, err := ReadCacheLevels(filepath.Join("testdata", "sysfs", tt.root))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ReadCacheLevels = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseCacheSize(t *testing.T) {
	good := map[string]int64{"32K": 32 << 10, "1024K": 1 << 20, "32768K": 32 << 20, "16M": 16 << 20, "1G": 1 << 30, "512": 512, " 48K\n": 48 << 10}
	for in, want := range good {
		if got, err := ParseCacheSize(in); err != nil || got != want {
			t.Errorf("ParseCacheSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "K", "0K", "-4K", "32KB", "lots", "99999999999999G"} {
		if _, err := ParseCacheSize(bad); err == nil {
			t.Errorf("ParseCacheSize(%q) succeeded", bad)
		}
	}
}

func FuzzParseCacheSize(f *testing.F) {
	for _, s := range []string{"32K", "1024K", "16M", "1G", "512", "", "K", "-1K", "9223372036854775807K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseCacheSize(s)
		if err == nil && (v <= 0 || v > 1<<40) {
			t.Fatalf("ParseCacheSize(%q) = %d: out of range without an error", s, v)
		}
		if err == nil {
			if back, err := ParseCacheSize(fmt.Sprint(v)); err != nil || back != v {
				t.Fatalf("%d bytes does not parse back: %d, %v", v, back, err)
			}
		}
	})
}

// TestBandwidthPlan: the microbenchmark's working sets come from the cache
// sizes (half of each level, twice the level below when that is much
// smaller, and DRAM beyond the last one), whatever the machine; each run
// moves enough bytes that ONNX Runtime's per-run cost is spread over many
// nodes; and the plan's duration is its budgets.
func TestBandwidthPlan(t *testing.T) {
	caches := []CacheLevel{{1, 48 << 10}, {2, 2 << 20}, {3, 105 << 20}}
	steps := bandwidthPlan(caches, []int{1, 0})
	type want struct {
		level string
		cache int64
		ws    int64
	}
	per := []want{
		{"L1", 48 << 10, 24 << 10},
		{"L2", 2 << 20, 96 << 10}, {"L2", 2 << 20, 1 << 20},
		{"L3", 105 << 20, 4 << 20}, {"L3", 105 << 20, 105 << 19},
		{"DRAM", 0, 210 << 20}, {"DRAM", 0, 420 << 20},
	}
	if len(steps) != 2*len(per) {
		t.Fatalf("%d steps, want %d per thread count: %+v", len(steps), len(per), steps)
	}
	for i, s := range steps {
		w := per[i%len(per)]
		if s.threads != []int{1, 0}[i/len(per)] || s.level != w.level || s.cacheBytes != w.cache || s.workingSet() > w.ws || s.workingSet() <= w.ws-12 {
			t.Errorf("step %d = %s on %d threads, cache %d, working set %d; want %+v", i, s.level, s.threads, s.cacheBytes, s.workingSet(), w)
		}
		if s.pairs < 1 || s.pairs > maxPairs || (s.bytesPerRun() < runBytes && s.pairs != maxPairs) {
			t.Errorf("step %s: %d pairs move %d bytes a run", s.level, s.pairs, s.bytesPerRun())
		}
	}
	if d := planDuration(steps); d != 2*(5*levelBudget+2*dramBudget) {
		t.Errorf("plan duration %s", d)
	}
	// Without cache sizes: DRAM alone, at the minimum size.
	steps = bandwidthPlan(nil, []int{0})
	if len(steps) != 1 || steps[0].level != LevelDRAM || steps[0].workingSet() > dramMinBytes || steps[0].workingSet() < dramMinBytes-12 {
		t.Errorf("plan without caches: %+v", steps)
	}
	if m := peakMethod(bandwidthPlan(caches, []int{1, 0})); !strings.Contains(m, "L1 24.0 KiB, L2 96.0 KiB and 1024.0 KiB, L3 4.0 MiB and 52.5 MiB, DRAM 210.0 MiB and 420.0 MiB") ||
		!strings.Contains(m, "on 1 thread and the default threads") || !strings.Contains(m, "about 2.3 s") {
		t.Errorf("method %q", m)
	}
}

// TestRoofsOf: one roof per level and thread count, the fastest of its
// working sets, with the set that reached it and all those measured.
func TestRoofsOf(t *testing.T) {
	steps := bandwidthPlan([]CacheLevel{{1, 32 << 10}, {2, 1 << 20}}, []int{1, 0})
	rates := make([]float64, len(steps))
	for i := range rates {
		rates[i] = float64(10 + i%3) // per thread count: L1 10, L2 11 and 12, DRAM 10 and 11
	}
	r := roofsOf(steps, rates)
	if len(r) != 6 {
		t.Fatalf("roofs %+v", r)
	}
	l2 := r[1]
	if l2.Level != "L2" || l2.Threads != 1 || l2.BytesPerS != 12 || l2.WorkingSetBytes != steps[2].workingSet() ||
		len(l2.WorkingSets) != 2 || l2.WorkingSets[0] != steps[1].workingSet() || l2.WorkingSets[1] != steps[2].workingSet() {
		t.Errorf("L2 roof %+v", l2)
	}
	if r[3].Level != "L1" || r[3].Threads != 0 {
		t.Errorf("default-thread roofs follow the one-thread ones: %+v", r[3])
	}
}

// levelPeaks is a machine with four bandwidth roofs, each measured on one
// thread and on the default threads (0), and a 1 TFLOP/s compute roof.
func levelPeaks() *report.Peaks {
	roof := func(level string, cache int64, one, all float64) []report.BandwidthRoof {
		ws := cache / 2
		if cache == 0 {
			ws = 128 << 20
		}
		return []report.BandwidthRoof{
			{Level: level, CacheBytes: cache, WorkingSetBytes: ws, Threads: 1, BytesPerS: one},
			{Level: level, CacheBytes: cache, WorkingSetBytes: ws, Threads: 0, BytesPerS: all},
		}
	}
	var levels []report.BandwidthRoof
	levels = append(levels, roof("L1", 32<<10, 100e9, 120e9)...)
	levels = append(levels, roof("L2", 1<<20, 60e9, 80e9)...)
	levels = append(levels, roof("L3", 32<<20, 40e9, 60e9)...)
	levels = append(levels, roof("DRAM", 0, 20e9, 30e9)...)
	p := &report.Peaks{FLOPsPerS: 1e12, FLOPsSource: SourceMeasured, BytesSource: SourceMeasured, Levels: levels, Caches: "sysfs fixture"}
	finishLevels(p)
	return p
}

// move is a pure data-movement node (a Transpose) of bytes, half read and
// half written, that reached rate bytes/s.
func move(name string, bytes, rate float64) report.NodeTiming {
	n := int64(bytes / 8) // floats per side
	return report.NodeTiming{Name: name, OpType: "Transpose", Provider: "CPUExecutionProvider", DurS: bytes / rate,
		InputShapes: []string{fmt.Sprintf("float[%d,1]", n)}, OutputShapes: []string{fmt.Sprintf("float[1,%d]", n)},
		ActivationSize: 4 * n, OutputSize: 4 * n}
}

// TestRooflinePlacesNodesByLevel: each node is compared with the roof of
// the smallest level its bytes fit in, on the model's thread count, and a
// node above its roof always says why, with the reason that accounts for it.
func TestRooflinePlacesNodesByLevel(t *testing.T) {
	p := levelPeaks()
	if p.BytesPerS != 30e9 || p.Ridge != 1e12/30e9 {
		t.Fatalf("the one bandwidth roof is DRAM on the default threads: %+v", p)
	}
	type want struct {
		roof    string
		threads int
		bw      float64
		share   float64
		above   string // a substring of AboveRoof; "" for a node under its roof
	}
	tests := []struct {
		name    string
		threads int
		node    report.NodeTiming
		want    want
	}{
		{"fits L1", 0, move("a", 16<<10, 60e9), want{"L1", 0, 120e9, 0.5, ""}},
		{"fits L2 exactly", 0, move("b", 1<<20, 40e9), want{"L2", 0, 80e9, 0.5, ""}},
		{"one byte over L2 fits L3", 0, move("c", 1<<20+8, 30e9), want{"L3", 0, 60e9, 0.5, ""}},
		{"over L3 is DRAM", 0, move("d", 64<<20, 15e9), want{"DRAM", 0, 30e9, 0.5, ""}},
		{"one-thread model uses one-thread roofs", 1, move("e", 512<<10, 30e9), want{"L2", 1, 60e9, 0.5, ""}},
		{"short node above by the timer", 0, move("f", 24<<10, 240e9), want{"L1", 0, 120e9, 2, "profiler records whole microseconds"}},
		{"one-thread model: no other thread count, a smaller working set", 1, move("g1", 480<<10, 80e9), want{"L2", 1, 60e9, 80.0 / 60, "its 480.0 KiB is under the smallest working set the L2 roof was measured at (512.0 KiB; the roof, 60.00 GB/s on 1 thread)"}},
		{"served from a closer cache", 0, move("h", 20<<20, 70e9), want{"L3", 0, 60e9, 70.0 / 60, "within the L2 roof on the default threads (80.00 GB/s): part of its bytes came from a closer cache"}},
		{"above every roof", 0, move("i", 200<<20, 300e9), want{"DRAM", 0, 30e9, 10, "above every measured roof (the fastest, L1 on the default threads, is 120.00 GB/s)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := RooflineThreads(&report.Operators{Timeline: []report.NodeTiming{tt.node}}, p, tt.threads)
			op := r.Ops[0]
			if op.Roof != tt.want.roof || op.RoofThreads == nil || *op.RoofThreads != tt.want.threads || op.RoofBytesPerS != tt.want.bw {
				t.Errorf("placed against %s on %v threads (%g B/s), want %s on %d (%g)", op.Roof, derefInt(op.RoofThreads), op.RoofBytesPerS, tt.want.roof, tt.want.threads, tt.want.bw)
			}
			if op.Bound != BoundMemory || op.RoofShare == nil || !near(*op.RoofShare, tt.want.share) {
				t.Errorf("bound %s, roof share %v; want memory, %g", op.Bound, deref(op.RoofShare), tt.want.share)
			}
			if (tt.want.above == "") != (op.AboveRoof == "") || !strings.Contains(op.AboveRoof, tt.want.above) {
				t.Errorf("above roof %q, want %q", op.AboveRoof, tt.want.above)
			}
			checkAboveExplained(t, r)
		})
	}

	// A model on the default threads runs a node on one thread, whose
	// roof at its level is the higher one.
	one := levelPeaks()
	one.Levels[2].BytesPerS = 120e9 // L2 on one thread
	r0 := RooflineThreads(&report.Operators{Timeline: []report.NodeTiming{move("g", 800<<10, 100e9)}}, one, 0)
	if op := r0.Ops[0]; op.Roof != "L2" || !strings.Contains(op.AboveRoof, "within the L2 roof on 1 thread (120.00 GB/s): ONNX Runtime splits only large tensors") {
		t.Errorf("one-thread node of a multi-thread model: %s, %q", op.Roof, op.AboveRoof)
	}
	// The same node of a model run on one thread is compared with the
	// one-thread roof, and is under it.
	r0 = RooflineThreads(&report.Operators{Timeline: []report.NodeTiming{move("g", 800<<10, 100e9)}}, one, 1)
	if op := r0.Ops[0]; op.AboveRoof != "" || op.RoofBytesPerS != 120e9 {
		t.Errorf("one-thread model: %s at %g B/s, %q", op.Roof, op.RoofBytesPerS, op.AboveRoof)
	}

	// A machine whose L1 roof is held down by ONNX Runtime's cost per
	// node: an L1 node faster than it, within the L2 roof, says so.
	low := levelPeaks()
	low.Levels[0].BytesPerS, low.Levels[1].BytesPerS = 10e9, 10e9
	r := RooflineThreads(&report.Operators{Timeline: []report.NodeTiming{move("j", 30<<10, 20e9)}}, low, 0)
	if op := r.Ops[0]; op.Roof != "L1" || !strings.Contains(op.AboveRoof, "is held down by ONNX Runtime's fixed cost per node") {
		t.Errorf("low L1 roof: %s, %q", op.Roof, op.AboveRoof)
	}
}

// TestRooflineOpTypeAcrossLevels: an op type whose nodes sit under several
// roofs names them all, has the time-weighted share of its nodes, and
// counts the nodes above their roofs by reason.
func TestRooflineOpTypeAcrossLevels(t *testing.T) {
	ops := &report.Operators{Timeline: []report.NodeTiming{
		move("l2", 512<<10, 40e9),   // 50% of the L2 roof
		move("l3", 16<<20, 30e9),    // 50% of the L3 roof
		move("fast", 20<<20, 70e9),  // above the L3 roof: a closer cache
		move("tiny", 24<<10, 240e9), // above the L1 roof: the timer
	}}
	r := RooflineThreads(ops, levelPeaks(), 0)
	if len(r.ByOpType) != 1 {
		t.Fatalf("by op type: %+v", r.ByOpType)
	}
	ty := r.ByOpType[0]
	var ideal, total float64
	for _, op := range r.Ops {
		ideal += op.DurS * *op.RoofShare
		total += op.DurS
	}
	if ty.Roof != "L1, L2, L3" || ty.RoofBytesPerS != 0 || ty.RoofThreads != nil || ty.RoofShare == nil || !near(*ty.RoofShare, ideal/total) || ty.Bound != BoundMemory {
		t.Errorf("op type %+v, share %v; want roofs L1, L2, L3 and share %g", ty.RoofPlacement, deref(ty.RoofShare), ideal/total)
	}
	if ty.AboveRoof != "2 of 4 nodes above their roofs: 1 served partly from a closer cache, 1 within the profiler's 1 µs resolution (each node says why)" {
		t.Errorf("above roof %q", ty.AboveRoof)
	}
	checkAboveExplained(t, r)
}

// TestRooflineOneRoof: without per-level roofs (cache sizes unknown, or
// --peak-bw) every node is compared with the one roof, and one above it
// says that the caches were not measured.
func TestRooflineOneRoof(t *testing.T) {
	p := &report.Peaks{FLOPsPerS: 1e12, BytesPerS: 20e9, FLOPsSource: SourceMeasured, BytesSource: SourceMeasured,
		Caches: "cache sizes unknown (no cache description in /sys/devices/system/cpu/cpu0/cache): one bandwidth roof, measured at a DRAM-sized working set"}
	r := Roofline(&report.Operators{Timeline: []report.NodeTiming{move("a", 8<<20, 10e9), move("b", 8<<20, 30e9)}}, p)
	a, b := r.Ops[0], r.Ops[1]
	if a.Roof != LevelMemory || a.RoofThreads != nil || a.RoofBytesPerS != 20e9 || a.AboveRoof != "" || !near(*a.RoofShare, 0.5) {
		t.Errorf("a: %+v", a)
	}
	if !strings.Contains(b.AboveRoof, "above the one bandwidth roof (20.00 GB/s)") || !strings.Contains(b.AboveRoof, "cache sizes unknown") {
		t.Errorf("b above roof %q", b.AboveRoof)
	}
	p.BytesSource, p.Caches = SourceFlag, ""
	r = Roofline(&report.Operators{Timeline: []report.NodeTiming{move("b", 8<<20, 30e9)}}, p)
	if !strings.Contains(r.Ops[0].AboveRoof, "given by --peak-bw") {
		t.Errorf("flag roof: %q", r.Ops[0].AboveRoof)
	}
	checkAboveExplained(t, r)
}

// TestRooflineComputeAbove: a compute-bound node above the compute roof
// says so too.
func TestRooflineComputeAbove(t *testing.T) {
	p := levelPeaks()
	p.FLOPsPerS = 10e9
	mm := report.NodeTiming{Name: "mm", OpType: "MatMul", Provider: "CPUExecutionProvider", DurS: 1e-3,
		InputShapes: []string{"float[256,256]", "float[256,256]"}, OutputShapes: []string{"float[256,256]"},
		ActivationSize: 262144, ParameterSize: 262144, OutputSize: 262144}
	r := RooflineThreads(&report.Operators{Timeline: []report.NodeTiming{mm}}, p, 0)
	if op := r.Ops[0]; op.Bound != BoundCompute || *op.RoofShare <= 1 || !strings.Contains(op.AboveRoof, "above the compute roof (10.00 GFLOP/s, measured)") {
		t.Errorf("mm: bound %s share %v above %q", op.Bound, deref(op.RoofShare), op.AboveRoof)
	}
}

// TestAboveKindsLabelled: every reason kind has its short form for the
// op-type summaries.
func TestAboveKindsLabelled(t *testing.T) {
	for _, k := range []string{aboveTimer, aboveThreads, aboveCloser, aboveSmallRoof, aboveSmallerSet, aboveAll, aboveOneRoof, aboveCompute} {
		if aboveLabels[k] == "" {
			t.Errorf("reason %q has no label", k)
		}
	}
}

// checkAboveExplained fails for any node or op type above its roof whose
// report does not say why.
func checkAboveExplained(t *testing.T, r *report.Roofline) {
	t.Helper()
	for _, op := range r.Ops {
		if op.RoofShare != nil && *op.RoofShare > 1 && op.AboveRoof == "" {
			t.Errorf("node %s is at %.0f%% of its %s roof with no explanation", op.Name, 100**op.RoofShare, op.Roof)
		}
	}
	for _, ty := range r.ByOpType {
		if ty.RoofShare != nil && *ty.RoofShare > 1 && ty.AboveRoof == "" {
			t.Errorf("op type %s is at %.0f%% of its roofs with no explanation", ty.OpType, 100**ty.RoofShare)
		}
	}
}

func derefInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestMemoryBoundFindingQuotesItsLevelsRidge: with per-level roofs, the
// memory-bound finding quotes the ridge point of the level its op types
// were judged against (L2 here: 1 TFLOP/s over 80 GB/s), not the DRAM
// ridge of the machine, and gives each level's ridge as evidence.
func TestMemoryBoundFindingQuotesItsLevelsRidge(t *testing.T) {
	nodes := repeat(5, convNode(1e-3), node("Add", cpuEP, 1e-3), node("Clip", cpuEP, 1e-3), node("Mul", cpuEP, 1e-3), node("Div", cpuEP, 1e-3))
	peaks := levelPeaks()
	f := &Facts{RequestedProviders: []string{cpuEP}, Batch: 1, Timeline: nodes, Peaks: peaks}
	f.Roofline = RooflineThreads(&report.Operators{Timeline: nodes}, peaks, 0)
	fd := ruleMemoryBound(f)
	if fd == nil {
		t.Fatal("no memory-bound finding")
	}
	if !strings.Contains(fd.Detail, "L2 12 FLOP/byte") || strings.Contains(fd.Detail, fmt.Sprintf("%.2g", peaks.Ridge)) {
		t.Errorf("detail %q, want the L2 ridge (12 FLOP/byte), not the DRAM ridge %.2g", fd.Detail, peaks.Ridge)
	}
	var got []string
	for _, e := range fd.Evidence {
		if strings.HasPrefix(e.Name, "ridge.") {
			got = append(got, fmt.Sprintf("%s=%g", e.Name, e.Value))
		}
	}
	if want := []string{"ridge.L2=12.5"}; !slices.Equal(got, want) {
		t.Errorf("level ridges in evidence %v, want %v", got, want)
	}

	// With one bandwidth roof the finding keeps the machine's ridge.
	f = timeline(nodes...)
	if fd := ruleMemoryBound(f); fd == nil || !strings.Contains(fd.Detail, "(the ridge point of this machine)") {
		t.Errorf("single-roof finding: %+v", fd)
	}
}
