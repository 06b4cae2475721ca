package liveview

import (
	"sort"
	"sync"
	"time"
)

// maxTimelineNodes bounds one timeline (a model with more operators shows
// its first ones and says how many were left out).
const maxTimelineNodes = 4096

// TimelineNode is one operator of a profiled run, on the run's own clock.
type TimelineNode struct {
	Name            string  `json:"name"`
	OpType          string  `json:"op_type"`
	StartSeconds    float64 `json:"start_seconds"` // since the run's first operator started
	DurationSeconds float64 `json:"duration_seconds"`
	Depth           int     `json:"depth"` // 0 in the main graph, 1 and more inside If, Loop and Scan subgraphs
}

// Timeline is the operators of the latest profiled run: what
// /api/v1/timeline returns. Snapshots name its run in "timeline_run", so a
// client fetches it only when it changes.
type Timeline struct {
	Version         int            `json:"version"`
	Run             int64          `json:"run"` // the profiled run's index in the session
	Start           time.Time      `json:"start"`
	DurationSeconds float64        `json:"duration_seconds"` // first operator's start to last one's end
	Nodes           []TimelineNode `json:"nodes"`            // by start time
	Omitted         int            `json:"omitted"`          // operators past the bound, not listed
}

// timelines collects operators run by run; a run is published when an
// operator of a later run arrives, or on FlushTimeline.
type timelines struct {
	mu        sync.Mutex
	run       int64
	start     time.Time
	end       time.Time
	nodes     []pendingNode
	omitted   int
	published *Timeline
}

type pendingNode struct {
	name, op   string
	start, end time.Time
	depth      int
}

// ObserveNode adds one operator of profiled run run (its index in the
// session). Operators arrive run by run, as the profiler delivers them;
// when one of a later run arrives, the earlier run becomes the published
// timeline. Operators of an older run than the one being collected are
// ignored. Safe for concurrent use; cheap enough for a profiling pass.
func (v *View) ObserveNode(run int64, name, opType string, start, end time.Time, depth int) {
	t := &v.timelines
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case len(t.nodes) == 0 && t.omitted == 0:
		t.run = run
	case run > t.run:
		t.publishLocked()
		t.run = run
	case run < t.run:
		return
	}
	if len(t.nodes) >= maxTimelineNodes {
		t.omitted++
		return
	}
	if t.start.IsZero() || start.Before(t.start) {
		t.start = start
	}
	if end.After(t.end) {
		t.end = end
	}
	t.nodes = append(t.nodes, pendingNode{name: name, op: opType, start: start, end: end, depth: depth})
}

// FlushTimeline publishes the run being collected, if any: call it when a
// profiling pass ends.
func (v *View) FlushTimeline() {
	v.timelines.mu.Lock()
	defer v.timelines.mu.Unlock()
	v.timelines.publishLocked()
}

// Timeline returns the latest published timeline, or nil.
func (v *View) Timeline() *Timeline {
	v.timelines.mu.Lock()
	defer v.timelines.mu.Unlock()
	return v.timelines.published
}

func (t *timelines) publishLocked() {
	if len(t.nodes) == 0 && t.omitted == 0 {
		return
	}
	tl := &Timeline{Version: Version, Run: t.run, Start: t.start.UTC(), DurationSeconds: t.end.Sub(t.start).Seconds(),
		Nodes: make([]TimelineNode, len(t.nodes)), Omitted: t.omitted}
	for i, n := range t.nodes {
		tl.Nodes[i] = TimelineNode{Name: n.name, OpType: n.op, StartSeconds: n.start.Sub(t.start).Seconds(),
			DurationSeconds: n.end.Sub(n.start).Seconds(), Depth: n.depth}
	}
	sort.SliceStable(tl.Nodes, func(i, j int) bool { return tl.Nodes[i].StartSeconds < tl.Nodes[j].StartSeconds })
	t.published = tl
	t.nodes, t.omitted = nil, 0
	t.start, t.end = time.Time{}, time.Time{}
}
