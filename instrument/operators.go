package instrument

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument/profile"
)

// ProfiledNode is one operator of one profiled run, as given to the
// WithNodeObserver callback.
type ProfiledNode struct {
	// Run is the index of the profiled run within its session, from 0.
	Run int64
	// RunSpan is the span context of the run the operator belongs to.
	RunSpan trace.SpanContext
	// Start and End place the operator in wall-clock time.
	Start, End time.Time
	// Node is the profiler's event for the operator (a copy; safe to keep).
	Node profile.Event
	// Self is the operator's own time: its duration less that of the
	// subgraph nodes it ran (If, Loop, Scan), which are observed on their
	// own. Summing Self over a run counts every microsecond once; use it
	// for statistics, and Start/End for timelines.
	Self time.Duration
	// Depth is 0 for a node of the main graph, 1 inside a subgraph of a
	// main-graph node, and so on.
	Depth int
}

// maxPendingNodes bounds the node events buffered while waiting for the
// model_run event that contains them (ORT writes a run's nodes first).
const maxPendingNodes = 1 << 20

// runGroup is one model_run event with the kernel and (nested)
// SequentialExecutor::Execute events inside it.
type runGroup struct {
	run   profile.Event
	nodes []profile.Event
}

// grouper turns a profile's event stream into run groups. It copies events
// into buffers it reuses, so reading profile after profile allocates
// nothing once they have grown: the group add returns is valid only until
// the next call to add.
type grouper struct {
	pending []profile.Event // events waiting for their model_run; slots past len are reused
	grp     runGroup
	dropped int
}

// add takes one event; it returns a complete group when ev is a model_run.
func (g *grouper) add(ev *profile.Event) *runGroup {
	if ev.IsKernel() || ev.IsExecute() {
		if len(g.pending) >= maxPendingNodes {
			if ev.IsKernel() {
				g.dropped++
			}
			return nil
		}
		n := len(g.pending)
		if n < cap(g.pending) {
			g.pending = g.pending[:n+1]
		} else {
			g.pending = append(g.pending, profile.Event{})
		}
		ev.CopyTo(&g.pending[n])
		return nil
	}
	if ev.Category != "Session" || ev.Name != "model_run" {
		return nil
	}
	grp := &g.grp
	ev.CopyTo(&grp.run)
	lo, hi := ev.TS, ev.TS+ev.Dur
	// Each slot of pending owns its slices: the group's nodes are shallow
	// copies of slots that end up past len (reused only by the next add),
	// and the nodes kept for later runs are swapped, never copied, to the
	// front.
	nodes := grp.nodes[:0]
	keep := 0
	for i := range g.pending {
		n := &g.pending[i]
		switch {
		case n.TS >= lo && n.TS+n.Dur <= hi:
			nodes = append(nodes, *n)
		case n.TS > hi:
			g.pending[keep], g.pending[i] = g.pending[i], g.pending[keep] // a later run's node (concurrent runs)
			keep++
		default:
			if n.IsKernel() {
				g.dropped++ // outside every run: no parent to give it
			}
		}
	}
	g.pending = g.pending[:keep]
	sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].TS < nodes[j].TS })
	grp.nodes = nodes
	return grp
}

// countRuns counts the model_run events of a profile file.
func countRuns(path string) (int, error) {
	n := 0
	_, err := profile.ReadFile(path, func(ev *profile.Event) error {
		if ev.Category == "Session" && ev.Name == "model_run" {
			n++
		}
		return nil
	})
	return n, err
}

// emitWindow reads a window's profile and emits every operator as a child of
// the run span it belongs to. created is when the window's session creation
// started: ORT's profile clock starts close to it, which places runs when
// the order alone cannot match them.
func emitWindow(e *emitter, path string, created time.Time, runs []profiledRun) (int, error) {
	// A per-run profile holds its one run, or none when the run failed
	// early: matching in order needs no counting pass over the file (a
	// second read of it, a fifth of a profiled VAD run's emission cost).
	n, err := 1, error(nil)
	if len(runs) != 1 {
		if n, err = countRuns(path); err != nil {
			return 0, err
		}
	}
	// ORT writes one model_run per run; a run that failed early may have
	// none. Match in order when the counts agree, else by estimated time.
	cands := runs
	if n != len(runs) {
		ok := make([]profiledRun, 0, len(runs))
		for _, r := range runs {
			if !r.failed {
				ok = append(ok, r)
			}
		}
		cands = ok
	}
	byOrder := n == len(cands)
	used := make([]bool, len(cands))
	k, emitted := 0, 0
	g := &e.g
	g.dropped = 0
	g.pending = g.pending[:0]
	err = e.read(path, func(ev *profile.Event) error {
		grp := g.add(ev)
		if grp == nil {
			return nil
		}
		idx := -1
		if byOrder {
			if k < len(cands) {
				idx = k
			}
			k++
		} else {
			idx = nearestRun(cands, used, created.Add(time.Duration(grp.run.TS)*time.Microsecond))
		}
		if idx < 0 {
			return nil
		}
		used[idx] = true
		emitted += e.emitRun(cands[idx], grp)
		return nil
	})
	if err != nil {
		return emitted, err
	}
	if g.dropped > 0 {
		return emitted, fmt.Errorf("%d node events of %q lay outside every run and were not emitted", g.dropped, path)
	}
	return emitted, nil
}

// nearestRun picks the unused run whose start is closest to t.
func nearestRun(runs []profiledRun, used []bool, t time.Time) int {
	best, bestD := -1, time.Duration(1<<62)
	for i, r := range runs {
		if used[i] {
			continue
		}
		d := r.start.Sub(t)
		if d < 0 {
			d = -d
		}
		if d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// placement maps ORT's profile clock onto a recorded run's wall-clock interval.
type placement struct {
	origin     time.Time // wall-clock time of profile ts = run.TS
	runTS      int64
	start, end time.Time // the run's recorded interval; operators stay inside it
}

// place centres ORT's model_run interval inside the recorded run interval:
// the span wraps the cgo call, which wraps ORT's own measurement, so the
// difference is call overhead split between both ends.
func place(r profiledRun, mr *profile.Event) placement {
	slack := r.end.Sub(r.start) - time.Duration(mr.Dur)*time.Microsecond
	if slack < 0 {
		slack = 0
	}
	return placement{origin: r.start.Add(slack / 2), runTS: mr.TS, start: r.start, end: r.end}
}

func (p placement) interval(n *profile.Event) (time.Time, time.Time) {
	s := p.origin.Add(time.Duration(n.TS-p.runTS) * time.Microsecond)
	e := s.Add(time.Duration(n.Dur) * time.Microsecond)
	if s.Before(p.start) {
		s = p.start
	}
	if e.After(p.end) {
		e = p.end
	}
	if e.Before(s) {
		e = s
	}
	return s, e
}

// nodeMetricAttrs returns the cached attribute set of (op type, provider).
func (c *core) nodeMetricAttrs(op, provider string) metric.MeasurementOption {
	key := [2]string{op, provider}
	c.nodeMu.Lock()
	defer c.nodeMu.Unlock()
	o, ok := c.nodeAttrs[key]
	if !ok {
		attrs := append(append([]attribute.KeyValue(nil), c.baseAttrs...),
			attribute.String(attrNodeOpType, op),
			attribute.String(attrExecutionProvider, provider))
		o = metric.WithAttributeSet(attribute.NewSet(attrs...))
		c.nodeAttrs[key] = o
	}
	return o
}

// AppendNodeAttributes appends the span attributes ortel gives one operator
// (node name, op type, provider, index, shapes, sizes, thread statistics and,
// from ONNX Runtime 1.25 on, the allocator readings) to dst and returns it.
// The model name and other session attributes are not included.
func AppendNodeAttributes(dst []attribute.KeyValue, n *profile.Event) []attribute.KeyValue {
	return appendDynamicNodeAttributes(appendStaticNodeAttributes(dst, n), n)
}

// appendStaticNodeAttributes appends the attributes of a node that stay
// the same from run to run while its shapes do.
func appendStaticNodeAttributes(dst []attribute.KeyValue, n *profile.Event) []attribute.KeyValue {
	attrs := append(dst,
		attribute.String(attrNodeName, n.NodeName()),
		attribute.String(attrNodeOpType, n.OpName),
		attribute.String(attrExecutionProvider, n.Provider),
	)
	if n.NodeIndex >= 0 {
		attrs = append(attrs, attribute.Int64(attrNodeIndex, n.NodeIndex))
	}
	if len(n.InputShapes) > 0 {
		attrs = append(attrs, attribute.StringSlice(attrNodeInputShapes, shapeStrings(n.InputShapes)))
	}
	if len(n.OutputShapes) > 0 {
		attrs = append(attrs, attribute.StringSlice(attrNodeOutputShapes, shapeStrings(n.OutputShapes)))
	}
	for _, sz := range [...]struct {
		key string
		v   int64
	}{
		{attrNodeActivationSize, n.ActivationSize},
		{attrNodeParameterSize, n.ParameterSize},
		{attrNodeOutputSize, n.OutputSize},
	} {
		if sz.v >= 0 {
			attrs = append(attrs, attribute.Int64(sz.key, sz.v))
		}
	}
	return attrs
}

// appendDynamicNodeAttributes appends the attributes of a node that change
// from run to run: thread statistics and allocator readings.
func appendDynamicNodeAttributes(attrs []attribute.KeyValue, n *profile.Event) []attribute.KeyValue {
	if t := SummarizeThreads(n); t.Threads > 0 {
		attrs = append(attrs,
			attribute.Int(attrNodeThreadsCount, t.Threads),
			attribute.Int64(attrNodeThreadsSubRuns, t.SubRuns),
			attribute.Float64(attrNodeThreadsMainRunRatio, t.MainRunRatio),
		)
		if t.Imbalance > 0 {
			attrs = append(attrs, attribute.Float64(attrNodeThreadsImbalance, t.Imbalance))
		}
	}
	if m := &n.Memory; m.Present {
		attrs = append(attrs,
			attribute.Int64(attrNodeMemArenaHeld, m.ArenaHeld),
			attribute.Int64(attrNodeMemArenaHeldDelta, m.ArenaHeldDelta),
			attribute.Int64(attrNodeMemInUse, m.BytesInUse),
			attribute.Int64(attrNodeMemInUseDelta, m.InUseDelta),
			attribute.Int64(attrNodeMemInUsePeak, m.InUsePeak),
		)
	}
	return attrs
}

func shapeStrings(ts []profile.TypeShape) []string {
	out := make([]string, len(ts))
	for i, s := range ts {
		out[i] = s.String()
	}
	return out
}

// ThreadSummary condenses ORT's thread_scheduling_stats of one node.
type ThreadSummary struct {
	// Threads is 1 (the calling thread) plus the sub-threads that ran work;
	// 0 when the profile holds no thread statistics.
	Threads int
	// SubRuns is the number of work items the sub-threads ran.
	SubRuns int64
	// MainRunRatio is the share of the node's time the calling thread spent
	// running work itself.
	MainRunRatio float64
	// Imbalance is max/mean of the sub-threads' work items: 1 is perfectly
	// even, higher means some threads did most of the work. 0 without
	// sub-threads.
	Imbalance float64
}

// SummarizeThreads condenses the thread statistics of a node event.
func SummarizeThreads(n *profile.Event) ThreadSummary {
	st := &n.Threads
	if !st.Present {
		return ThreadSummary{}
	}
	s := ThreadSummary{Threads: 1}
	var maxRun int64
	active := 0
	for _, t := range st.SubThreads {
		if t.NumRun > 0 {
			active++
			s.SubRuns += t.NumRun
			maxRun = max(maxRun, t.NumRun)
		}
	}
	s.Threads += active
	if n.Dur > 0 {
		s.MainRunRatio = min(float64(st.Run)/float64(n.Dur), 1)
	}
	if active > 0 {
		mean := float64(s.SubRuns) / float64(active)
		s.Imbalance = float64(maxRun) / mean
	}
	return s
}

// ImportStats says what ImportProfile emitted.
type ImportStats struct {
	Runs     int // model_run events, one trace each
	Nodes    int // operator spans
	Other    int // other session events (model loading, initialization), as spans
	Dropped  int // node events outside every run
	Warnings []profile.Warning
	// Rejected counts events skipped for impossible times (a negative,
	// non-finite or out-of-range ts or dur; see profile.Reader.Rejected).
	Rejected int
}

// ImportProfile turns an ORT profile written by any ORT program (Python, C++,
// C#, Go) into spans: one trace per model_run, with its operators as child
// spans (the nodes of If/Loop/Scan subgraphs as children of the node that
// ran them), and a span for each other session event (model loading, session
// initialization). origin is the wall-clock time of the profile's clock zero,
// usually when the profiled session was created. It uses the same options as
// sessions (providers, model name).
//
// ImportProfile reads r as a stream. ORT writes a run's node events just
// before its model_run event, so it holds only the events of the run not
// yet closed, in buffers it reuses: its memory is that of the largest run,
// whatever the file's size. A file whose node events never meet a model_run
// (a truncated or hand-edited profile) is held up to 2^20 events; beyond
// that node events are counted in ImportStats.Dropped. Spans go through the
// TracerProvider's span processor, which may drop under a burst (the SDK's
// batcher drops when its queue is full): `ortel import` (internal/profimport)
// converts with backpressure and spills held events to disk, and is the
// lossless path for large files.
func ImportProfile(ctx context.Context, r io.Reader, origin time.Time, opts ...Option) (ImportStats, error) {
	c := newCore("", opts)
	var st ImportStats
	e := newEmitter(c)
	g := &e.g
	rd := profile.NewReader(r)
	at := func(ts int64) time.Time { return origin.Add(time.Duration(ts) * time.Microsecond) }
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			st.Warnings, st.Rejected = rd.Warnings(), rd.RejectedCount()
			st.Dropped = g.dropped + len(g.pending)
			return st, err
		}
		if ev.Category == "Session" && ev.Name != "model_run" && ev.Name != "SequentialExecutor::Execute" {
			_, span := c.tracer.Start(ctx, ev.Name, trace.WithNewRoot(), trace.WithTimestamp(at(ev.TS)),
				trace.WithAttributes(c.baseAttrs...))
			span.End(trace.WithTimestamp(at(ev.TS + ev.Dur)))
			st.Other++
			continue
		}
		grp := g.add(ev)
		if grp == nil {
			continue
		}
		start, end := at(grp.run.TS), at(grp.run.TS+grp.run.Dur)
		_, span := c.tracer.Start(ctx, c.spanName, trace.WithNewRoot(), trace.WithTimestamp(start),
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(append(append([]attribute.KeyValue(nil), c.spanAttrs...), attribute.Bool(attrRunProfiled, true))...))
		st.Nodes += e.emitRun(profiledRun{sc: span.SpanContext(), start: start, end: end, index: int64(st.Runs)}, grp)
		span.End(trace.WithTimestamp(end))
		c.inst.runDuration.Record(ctx, end.Sub(start).Seconds(), c.recProfiled...)
		st.Runs++
	}
	st.Warnings, st.Rejected = rd.Warnings(), rd.RejectedCount()
	st.Dropped = g.dropped + len(g.pending)
	return st, nil
}

// ImportProfileFile is ImportProfile for a file. When origin is zero it is
// read from the file name ORT gives profiles (prefix_YYYY-MM-DD_HH-MM-SS.json,
// local time), else the file's modification time is used.
func ImportProfileFile(ctx context.Context, path string, origin time.Time, opts ...Option) (ImportStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return ImportStats{}, fmt.Errorf("read profile %q: %w", path, err)
	}
	defer f.Close()
	if origin.IsZero() {
		origin = ProfileOrigin(path)
	}
	st, err := ImportProfile(ctx, f, origin, opts...)
	if err != nil {
		return st, fmt.Errorf("read profile %q: %w", path, err)
	}
	return st, nil
}
