package profile

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

// readGz reads every event of a gzip-compressed profile in testdata.
func readGz(tb testing.TB, name string) []Event {
	tb.Helper()
	r := NewReader(bytes.NewReader(gunzipTestdata(tb, name)))
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if err.Error() != "EOF" {
				tb.Fatalf("%s: %v", name, err)
			}
			break
		}
		evs = append(evs, ev.Clone())
	}
	if n := r.WarningCount(); n != 0 {
		tb.Errorf("%s: %d warnings on a profile ONNX Runtime wrote: %v", name, n, r.Warnings())
	}
	return evs
}

// oneRun returns the model_run of evs (which must hold exactly one) and the
// kernel and Execute events inside it.
func oneRun(tb testing.TB, evs []Event) (Event, []Event) {
	tb.Helper()
	var run *Event
	for i := range evs {
		if evs[i].Category == "Session" && evs[i].Name == "model_run" {
			if run != nil {
				tb.Fatal("more than one model_run")
			}
			run = &evs[i]
		}
	}
	if run == nil {
		tb.Fatal("no model_run")
	}
	var in []Event
	for _, e := range evs {
		if (e.IsKernel() || e.IsExecute()) && e.TS >= run.TS && e.TS+e.Dur <= run.TS+run.Dur {
			in = append(in, e)
		}
	}
	return *run, in
}

// TestNestRealProfiles nests one run of Silero VAD (If subgraphs three deep)
// and of PaddleOCR det (no subgraph) as ONNX Runtime 1.24.3 and 1.30.0 wrote
// them. It catches a flat tree (every subgraph node a sibling of its If), a
// parent chosen by overlap alone, and self times that count a microsecond
// twice.
func TestNestRealProfiles(t *testing.T) {
	for _, tc := range []struct {
		file      string
		nested    bool
		wantChain []string // a kernel and its ancestors, innermost first
	}{
		{"vad_ort1.24.3.json.gz", true, []string{
			"If_0_then_branch__Inline_0__/decoder/rnn/LSTM", "If_0_then_branch__Inline_0__/decoder/If_1", "If_0"}},
		{"vad_ort1.30.0.json.gz", true, []string{
			"If_0_then_branch__Inline_0__/decoder/rnn/LSTM", "If_0_then_branch__Inline_0__/decoder/If_1", "If_0"}},
		{"det_ort1.24.3.json.gz", false, nil},
		{"det_ort1.30.0.json.gz", false, nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			run, evs := oneRun(t, readGz(t, tc.file))
			pl := Nest(evs)
			var selfSum, durSum int64
			nested := 0
			for i, e := range evs {
				p := pl[i]
				if p.Parent >= 0 {
					par := &evs[p.Parent]
					if !par.IsKernel() {
						t.Fatalf("%s: parent %s is not a kernel", e.Name, par.Name)
					}
					if e.TS < par.TS || e.TS+e.Dur > par.TS+par.Dur {
						t.Errorf("%s [%d,+%d] lies outside its parent %s [%d,+%d]", e.Name, e.TS, e.Dur, par.Name, par.TS, par.Dur)
					}
					if p.Depth != pl[p.Parent].Depth+1 {
						t.Errorf("%s: depth %d under a parent of depth %d", e.Name, p.Depth, pl[p.Parent].Depth)
					}
				}
				if !e.IsKernel() {
					continue
				}
				durSum += e.Dur
				selfSum += p.Self
				if p.Self < 0 || p.Self > e.Dur {
					t.Errorf("%s: self %d µs outside [0, %d]", e.Name, p.Self, e.Dur)
				}
				inlined := strings.Contains(e.Name, "_Inline_")
				if inlined != (p.Parent >= 0) {
					t.Errorf("%s: parent %d; want a parent exactly for inlined subgraph nodes", e.Name, p.Parent)
				}
				if p.Parent >= 0 {
					nested++
					if op := evs[p.Parent].OpName; op != "If" && op != "Loop" && op != "Scan" {
						t.Errorf("%s nested under a %s node", e.Name, op)
					}
				}
			}
			if selfSum > run.Dur {
				t.Errorf("self times sum to %d µs, more than the run's %d µs", selfSum, run.Dur)
			}
			if tc.nested {
				if nested == 0 {
					t.Fatal("no kernel nested: the tree is flat")
				}
				if durSum <= run.Dur {
					t.Errorf("durations sum to %d µs, not above the run's %d µs: the profile no longer shows the double count this test guards", durSum, run.Dur)
				}
			} else if nested != 0 || selfSum != durSum {
				t.Errorf("%d nested kernels, self %d vs dur %d: want a flat run", nested, selfSum, durSum)
			}
			t.Logf("run %d µs, kernels: duration sum %d µs, self sum %d µs, %d nested", run.Dur, durSum, selfSum, nested)
			if tc.wantChain != nil {
				i := findKernel(evs, tc.wantChain[0])
				for _, want := range tc.wantChain[1:] {
					if i < 0 {
						t.Fatalf("chain %v broken before %s", tc.wantChain, want)
					}
					i = pl[i].Parent
					if i < 0 || evs[i].NodeName() != want {
						t.Fatalf("chain %v: got parent index %d, want %s", tc.wantChain, i, want)
					}
				}
				if pl[i].Parent != -1 || pl[i].Depth != 0 {
					t.Errorf("%s: parent %d depth %d, want the run's main graph", evs[i].Name, pl[i].Parent, pl[i].Depth)
				}
			}
		})
	}
}

func findKernel(evs []Event, node string) int {
	for i := range evs {
		if evs[i].IsKernel() && evs[i].NodeName() == node {
			return i
		}
	}
	return -1
}

// TestNestOverlapIsNotNesting: a parallel executor runs nodes at once; one
// enclosing another in time is no parent without an Execute between them.
func TestNestOverlapIsNotNesting(t *testing.T) {
	k := func(name string, ts, dur int64) Event {
		return Event{Category: "Node", Name: name + "_kernel_time", OpName: "Op", TS: ts, Dur: dur}
	}
	x := func(ts, dur int64) Event { return Event{Category: "Session", Name: ExecuteName, TS: ts, Dur: dur} }
	evs := []Event{
		k("a", 10, 100), k("b", 20, 10), // b overlaps a on another thread
		k("loop", 200, 50), x(205, 40), k("body", 210, 20), // loop ran body
		x(0, 300), // the run's own Execute
	}
	pl := Nest(evs)
	for i, want := range []int{-1, -1, -1, 2, 2, -1} {
		if pl[i].Parent != want {
			t.Errorf("%s: parent %d, want %d", evs[i].Name, pl[i].Parent, want)
		}
	}
	if pl[0].Self != 100 || pl[2].Self != 30 || pl[4].Self != 20 {
		t.Errorf("self a %d loop %d body %d, want 100 30 20", pl[0].Self, pl[2].Self, pl[4].Self)
	}
}

// TestMemoryArgs reads the mem_* args ONNX Runtime 1.30 writes (quoted,
// deltas possibly negative) and finds none in a 1.24.3 profile.
func TestMemoryArgs(t *testing.T) {
	_, evs := oneRun(t, readGz(t, "det_ort1.30.0.json.gz"))
	withMem, peak := 0, int64(0)
	for _, e := range evs {
		if !e.IsKernel() {
			continue
		}
		if e.Memory.Present {
			withMem++
		}
		if e.Memory.ArenaHeld < 0 || e.Memory.InUsePeak < e.Memory.BytesInUse && e.Memory.InUsePeak != 0 {
			t.Errorf("%s: implausible memory %+v", e.Name, e.Memory)
		}
		peak = max(peak, e.Memory.ArenaHeld)
	}
	if withMem == 0 || peak == 0 {
		t.Fatalf("%d kernels with mem_* args, arena peak %d: want them read", withMem, peak)
	}
	_, old := oneRun(t, readGz(t, "det_ort1.24.3.json.gz"))
	for _, e := range old {
		if e.Memory.Present {
			t.Fatalf("%s: memory %+v in a 1.24.3 profile that has no mem_* args", e.Name, e.Memory)
		}
	}
	r := NewReader(strings.NewReader(`[{"cat":"Node","name":"a_kernel_time","args":{"mem_in_use_delta":"-256","mem_arena_held_delta":4096,"mem_arena_held":"8192"}}]`))
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if m := ev.Memory; !m.Present || m.InUseDelta != -256 || m.ArenaHeldDelta != 4096 || m.ArenaHeld != 8192 {
		t.Errorf("memory %+v", m)
	}
}

// gunzipTestdata returns the bytes of a gzip-compressed file in testdata.
func gunzipTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	return testenv.Gunzip(tb, filepath.Join("testdata", name))
}
