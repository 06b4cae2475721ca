package liveview

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTimelinePublishesCompleteRuns: a run's operators are published when
// the next run's first operator arrives (or on FlushTimeline), placed on
// the run's own clock, in start order; an older run's stragglers are
// ignored; snapshots name the published run and /api/v1/timeline serves
// it in the documented schema. A timeline published node by node would
// show half runs; one never published would leave the page empty.
func TestTimelinePublishesCompleteRuns(t *testing.T) {
	v := newView(t, Config{})
	srv := httptest.NewServer(v.Handler(""))
	defer srv.Close()
	if resp, err := http.Get(srv.URL + "/api/v1/timeline"); err != nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("timeline before any profiled run: %v %v, want 404", resp, err)
	}
	t0 := time.Unix(1000, 0)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	// Run 3, delivered out of order: an If node and a node of its subgraph.
	v.ObserveNode(3, "then/Add", "Add", at(30), at(40), 1)
	v.ObserveNode(3, "If_0", "If", at(20), at(50), 0)
	v.ObserveNode(3, "Conv_0", "Conv", at(10), at(20), 0)
	if v.Timeline() != nil {
		t.Fatal("a run was published before it was complete")
	}
	mustSample(t, v)
	if s := current(t, v); s.TimelineRun != nil {
		t.Fatalf("snapshot names timeline run %d before one was published", *s.TimelineRun)
	}
	v.ObserveNode(4, "Conv_0", "Conv", at(100), at(112), 0)
	v.ObserveNode(2, "late", "Relu", at(0), at(1), 0) // older run: ignored
	tl := v.Timeline()
	if tl == nil || tl.Run != 3 || len(tl.Nodes) != 3 {
		t.Fatalf("published %+v, want run 3 with 3 operators", tl)
	}
	want := []TimelineNode{
		{Name: "Conv_0", OpType: "Conv", StartSeconds: 0, DurationSeconds: 10e-6, Depth: 0},
		{Name: "If_0", OpType: "If", StartSeconds: 10e-6, DurationSeconds: 30e-6, Depth: 0},
		{Name: "then/Add", OpType: "Add", StartSeconds: 20e-6, DurationSeconds: 10e-6, Depth: 1},
	}
	for i, n := range tl.Nodes {
		if n.Name != want[i].Name || n.Depth != want[i].Depth || !near(n.StartSeconds, want[i].StartSeconds) || !near(n.DurationSeconds, want[i].DurationSeconds) {
			t.Errorf("node %d = %+v, want %+v", i, n, want[i])
		}
	}
	if !near(tl.DurationSeconds, 40e-6) || !tl.Start.Equal(at(10)) {
		t.Errorf("run start %v, length %g s; want %v and 40 µs", tl.Start, tl.DurationSeconds, at(10))
	}
	mustSample(t, v)
	if s := current(t, v); s.TimelineRun == nil || *s.TimelineRun != 3 {
		t.Errorf("snapshot timeline_run = %v, want 3", s.TimelineRun)
	}
	v.FlushTimeline()
	if tl := v.Timeline(); tl == nil || tl.Run != 4 || len(tl.Nodes) != 1 {
		t.Fatalf("after FlushTimeline: %+v, want run 4 with 1 operator", tl)
	}

	resp, err := http.Get(srv.URL + "/api/v1/timeline")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	var got Timeline
	if err := dec.Decode(&got); err != nil || resp.StatusCode != 200 || got.Version != Version || got.Run != 4 {
		t.Fatalf("GET /api/v1/timeline: %s, %+v, %v", resp.Status, got, err)
	}
}

// TestTimelineIsBounded: a run with more operators than the bound lists
// the first ones and counts the rest.
func TestTimelineIsBounded(t *testing.T) {
	v := newView(t, Config{})
	t0 := time.Unix(1000, 0)
	for i := range maxTimelineNodes + 5 {
		v.ObserveNode(0, "n", "Add", t0.Add(time.Duration(i)), t0.Add(time.Duration(i+1)), 0)
	}
	v.FlushTimeline()
	if tl := v.Timeline(); len(tl.Nodes) != maxTimelineNodes || tl.Omitted != 5 {
		t.Fatalf("%d nodes, %d omitted; want %d and 5", len(tl.Nodes), tl.Omitted, maxTimelineNodes)
	}
}

func near(a, b float64) bool { d := a - b; return d < 1e-12 && d > -1e-12 }
