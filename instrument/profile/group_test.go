package profile

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
)

func kernel(name string, tid, ts, dur int64) Event {
	return Event{Category: "Node", Name: name + "_kernel_time", TID: tid, TS: ts, Dur: dur, NodeIndex: -1}
}

func execute(tid, ts, dur int64) Event {
	return Event{Category: "Session", Name: ExecuteName, TID: tid, TS: ts, Dur: dur}
}

func modelRun(tid, ts, dur int64) Event {
	return Event{Category: "Session", Name: "model_run", TID: tid, TS: ts, Dur: dur}
}

// groupAll feeds evs to a Grouper and describes each run it closes as
// "run@TS: name name ...", the events by start time (then as the Grouper
// gave them) with their nesting depth when above 0 ("name/1"), then the
// kernels left outside.
func groupAll(t *testing.T, g *Grouper, evs []Event) []string {
	t.Helper()
	var out []string
	for i := range evs {
		r, err := g.Add(&evs[i])
		if err != nil {
			t.Fatal(err)
		}
		if r == nil {
			continue
		}
		idx := make([]int, len(r.Events))
		for j := range idx {
			idx[j] = j
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(r.Events[a].TS, r.Events[b].TS) })
		s := fmt.Sprintf("run@%d:", r.Run.TS)
		for _, j := range idx {
			s += " " + r.Events[j].Name
			if d := r.Placements[j].Depth; d > 0 {
				s += fmt.Sprintf("/%d", d)
			}
		}
		out = append(out, s)
	}
	n, err := g.Outside()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, fmt.Sprintf("outside %d", n))
}

// TestGrouperMatchesEventsToRuns is the grouper's specification, each case
// also run with one and two events held in memory so that everything goes
// through the temporary file.
func TestGrouperMatchesEventsToRuns(t *testing.T) {
	k := func(name string, ts, dur int64) Event { return kernel(name, 1, ts, dur) }
	tests := []struct {
		name string
		evs  []Event
		want []string
	}{{
		name: "sequential runs; a later run's node waits",
		evs: []Event{k("a", 10, 5), k("b", 20, 5), k("c", 200, 5), modelRun(1, 5, 30),
			modelRun(1, 190, 30)},
		want: []string{"run@5: a_kernel_time b_kernel_time", "run@190: c_kernel_time", "outside 0"},
	}, {
		name: "a run takes its events whatever their order in the file",
		evs:  []Event{k("late", 20, 5), k("early", 10, 5), modelRun(1, 5, 30)},
		want: []string{"run@5: early_kernel_time late_kernel_time", "outside 0"},
	}, {
		name: "a node outside every run is counted at the end",
		evs:  []Event{k("a", 1, 1), modelRun(1, 100, 10)},
		want: []string{"run@100:", "outside 1"},
	}, {
		name: "a truncated profile: nodes with no model_run",
		evs:  []Event{k("a", 10, 5), execute(1, 9, 10), k("b", 20, 5)},
		want: []string{"outside 2"},
	}, {
		name: "fence and other session events are not kept",
		evs: []Event{{Category: "Node", Name: "a_fence_before", TID: 1, TS: 9}, k("a", 10, 5),
			{Category: "Session", Name: "session_initialization", TID: 1, TS: 0, Dur: 50}, modelRun(1, 5, 30)},
		want: []string{"run@5: a_kernel_time", "outside 0"},
	}, {
		// Two threads ran at once: B's node lies inside A's interval, and
		// the thread keeps it in B.
		name: "concurrent runs told apart by thread",
		evs: []Event{kernel("a1", 1, 10, 5), kernel("b1", 2, 15, 5), kernel("a2", 1, 20, 5),
			modelRun(1, 5, 30), kernel("b2", 2, 40, 5), modelRun(2, 12, 40)},
		want: []string{"run@5: a1_kernel_time a2_kernel_time", "run@12: b1_kernel_time b2_kernel_time", "outside 0"},
	}, {
		// A parallel executor runs nodes on pool threads: no kernel on the
		// run's thread, so the run takes every event inside its interval.
		name: "parallel executor: nodes on other threads",
		evs:  []Event{kernel("a", 7, 10, 5), kernel("b", 8, 12, 5), modelRun(1, 5, 30)},
		want: []string{"run@5: a_kernel_time b_kernel_time", "outside 0"},
	}, {
		// An If node (10-40) ran a subgraph (Execute 12-38) of two nodes;
		// ORT writes them before the If, the run's Execute last.
		name: "subgraph nodes nest under the node that ran them",
		evs: []Event{k("then/cast", 13, 5), k("then/add", 20, 10), execute(1, 12, 26), k("if", 10, 30),
			k("after", 45, 5), execute(1, 6, 50), modelRun(1, 5, 52)},
		want: []string{"run@5: " + ExecuteName + " if_kernel_time " + ExecuteName + "/1 then/cast_kernel_time/1 then/add_kernel_time/1 after_kernel_time", "outside 0"},
	}}
	for _, tt := range tests {
		for _, held := range []int{DefaultMaxPending, 2, 1} {
			t.Run(fmt.Sprintf("%s/held=%d", tt.name, held), func(t *testing.T) {
				g := NewGrouper(WithMaxPending(held), WithSpillDir(t.TempDir()))
				defer g.Reset()
				if got := groupAll(t, g, slices.Clone(tt.evs)); !slices.Equal(got, tt.want) {
					t.Errorf("got\n  %q\nwant\n  %q", got, tt.want)
				}
				if kept(tt.evs) >= held && g.Spilled() == 0 {
					t.Error("nothing went through the temporary file")
				}
			})
		}
	}
}

// TestGrouperSelfTimes checks the placements a closed run carries: an If
// node's self time excludes the subgraph nodes it ran.
func TestGrouperSelfTimes(t *testing.T) {
	g := NewGrouper()
	evs := []Event{kernel("then/cast", 1, 13, 5), kernel("then/add", 1, 20, 10), execute(1, 12, 26),
		kernel("if", 1, 10, 30), modelRun(1, 5, 40)}
	var r *Run
	for i := range evs {
		var err error
		if r, err = g.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if r == nil {
		t.Fatal("the model_run closed no run")
	}
	self := map[string]int64{}
	for i, e := range r.Events {
		self[e.Name] = r.Placements[i].Self
	}
	if self["if_kernel_time"] != 15 || self["then/cast_kernel_time"] != 5 || self["then/add_kernel_time"] != 10 {
		t.Errorf("self times %v, want if 15 (30 less 5 and 10), cast 5, add 10", self)
	}
}

// TestGrouperRealProfile groups the real two-run profile whole in memory
// and through the temporary file, and gets the same runs both ways, each
// with all its kernels.
func TestGrouperRealProfile(t *testing.T) {
	read := func(g *Grouper) []string {
		rd := NewReader(bytes.NewReader(loadReal(t)))
		var runs []string
		for {
			ev, err := rd.Next()
			if err != nil {
				break
			}
			r, err := g.Add(ev)
			if err != nil {
				t.Fatal(err)
			}
			if r == nil {
				continue
			}
			kernels := 0
			for i := range r.Events {
				if r.Events[i].IsKernel() {
					kernels++
				}
			}
			runs = append(runs, fmt.Sprintf("run@%d %d kernels", r.Run.TS, kernels))
		}
		if n, err := g.Outside(); n != 0 || err != nil {
			t.Errorf("outside %d, %v", n, err)
		}
		return runs
	}
	mem := read(NewGrouper())
	if len(mem) != realRuns {
		t.Fatalf("%d runs, want %d", len(mem), realRuns)
	}
	for _, r := range mem {
		if want := fmt.Sprintf("%d kernels", realKernelsPerRun); !bytes.HasSuffix([]byte(r), []byte(want)) {
			t.Errorf("%s, want %s", r, want)
		}
	}
	dir := t.TempDir()
	g := NewGrouper(WithMaxPending(7), WithSpillDir(dir))
	if spilled := read(g); !slices.Equal(spilled, mem) {
		t.Errorf("through the temporary file: %q, in memory: %q", spilled, mem)
	}
	if g.Spilled() == 0 {
		t.Error("nothing went through the temporary file")
	}
	if err := g.Reset(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("Reset left %v behind", left)
	}
}

// TestGrouperReusesBuffers: once its buffers have grown, grouping the real
// profile again allocates nothing.
func TestGrouperReusesBuffers(t *testing.T) {
	var evs []Event
	rd := NewReader(bytes.NewReader(loadReal(t)))
	for {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		evs = append(evs, ev.Clone())
	}
	g := NewGrouper()
	feed := func() {
		for i := range evs {
			if _, err := g.Add(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		g.Reset()
	}
	feed()
	if n := testing.AllocsPerRun(5, feed); n != 0 {
		t.Errorf("grouping a profile again allocates %v times", n)
	}
}

func TestGrouperSpillDirMissing(t *testing.T) {
	g := NewGrouper(WithMaxPending(1), WithSpillDir(filepath.Join(t.TempDir(), "gone")))
	ev := kernel("a", 1, 10, 5)
	if _, err := g.Add(&ev); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("spilling into a missing folder: %v, want an error saying it does not exist", err)
	}
}

// kept counts the events a Grouper holds until their run: kernels and
// SequentialExecutor::Execute events.
func kept(evs []Event) int {
	n := 0
	for i := range evs {
		if evs[i].IsKernel() || evs[i].IsExecute() {
			n++
		}
	}
	return n
}
