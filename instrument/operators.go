package instrument

import (
	"context"
	"fmt"
	"io"
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
	g := e.g
	defer g.Reset()
	err = e.read(path, func(ev *profile.Event) error {
		grp, err := g.Add(ev)
		if grp == nil || err != nil {
			return err
		}
		idx := -1
		if byOrder {
			if k < len(cands) {
				idx = k
			}
			k++
		} else {
			idx = nearestRun(cands, used, created.Add(time.Duration(grp.Run.TS)*time.Microsecond))
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
	outside, err := g.Outside()
	if err != nil {
		return emitted, err
	}
	if outside > 0 {
		return emitted, fmt.Errorf("%d node events of %q lay outside every run and were not emitted", outside, path)
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
// ImportProfile reads r as a stream and groups its events into runs as
// ortel's live profiling and `ortel import` do (profile.Grouper): ORT writes
// a run's node events just before its model_run event, so it holds only the
// events of runs not yet closed, in buffers it reuses, matched to their run
// by interval and thread. Its memory is bounded whatever the file: past
// profile.DefaultMaxPending held events it writes them to a temporary file
// in the system's temporary folder, removed before it returns. Node events
// no run encloses (a truncated or hand-edited profile) are counted in
// ImportStats.Dropped. Spans go through the TracerProvider's span
// processor, which may drop under a burst (the SDK's batcher drops when its
// queue is full): `ortel import` (internal/profimport) converts with
// backpressure, and is the lossless path for large files.
func ImportProfile(ctx context.Context, r io.Reader, origin time.Time, opts ...Option) (st ImportStats, err error) {
	c := newCore("", opts)
	e := newEmitter(c)
	g := e.g
	rd := profile.NewReader(r)
	defer func() {
		st.Warnings, st.Rejected = rd.Warnings(), rd.RejectedCount()
		var oerr error
		st.Dropped, oerr = g.Outside()
		if rerr := g.Reset(); oerr == nil {
			oerr = rerr
		}
		if err == nil {
			err = oerr
		}
	}()
	at := func(ts int64) time.Time { return origin.Add(time.Duration(ts) * time.Microsecond) }
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return st, nil
		}
		if err != nil {
			return st, err
		}
		if ev.Category == "Session" && ev.Name != "model_run" && !ev.IsExecute() {
			_, span := c.tracer.Start(ctx, ev.Name, trace.WithNewRoot(), trace.WithTimestamp(at(ev.TS)),
				trace.WithAttributes(c.baseAttrs...))
			span.End(trace.WithTimestamp(at(ev.TS + ev.Dur)))
			st.Other++
			continue
		}
		grp, err := g.Add(ev)
		if err != nil {
			return st, err
		}
		if grp == nil {
			continue
		}
		start, end := at(grp.Run.TS), at(grp.Run.TS+grp.Run.Dur)
		_, span := c.tracer.Start(ctx, c.spanName, trace.WithNewRoot(), trace.WithTimestamp(start),
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(append(append([]attribute.KeyValue(nil), c.spanAttrs...), attribute.Bool(attrRunProfiled, true))...))
		st.Nodes += e.emitRun(profiledRun{sc: span.SpanContext(), start: start, end: end, index: int64(st.Runs)}, grp)
		span.End(trace.WithTimestamp(end))
		c.inst.runDuration.Record(ctx, end.Sub(start).Seconds(), c.recProfiled...)
		st.Runs++
	}
}
