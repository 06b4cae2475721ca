package profimport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/profile"
	"github.com/ortel-dev/ortel/internal/configerr"
	"github.com/ortel-dev/ortel/semconv"
)

// Config configures Import. Its zero value is valid: every field has a
// default.
type Config struct {
	// Origin is the wall-clock time of the profile clock's zero; the zero
	// Time stands for the Unix epoch.
	Origin time.Time
	// Model is the onnxruntime.model.name of every span and measurement;
	// default "model".
	Model string
	// RunAttrs are extra attributes of the run spans (the execution
	// providers the session asked for, say).
	RunAttrs []attribute.KeyValue
	// MeterProvider receives the run, node and memory histograms; default:
	// none.
	MeterProvider metric.MeterProvider
	// BatchSize is the most spans per Sink.Write; default 1024.
	BatchSize int
	// MaxPending is the most events kept in memory while no model_run
	// encloses them; beyond it they are spilled to a temporary file in
	// SpillDir (default os.TempDir). Default 8192 (a few MB).
	MaxPending int
	SpillDir   string
}

// Validate checks c before anything is read: BatchSize and MaxPending are
// not negative (0 takes the default). Its errors name the fields as
// {BatchSize} and {MaxPending} (configerr).
func (c Config) Validate() error {
	if c.BatchSize < 0 {
		return configerr.New("import", "{BatchSize} %d: want 1 or more spans, or 0 for the default", c.BatchSize)
	}
	if c.MaxPending < 0 {
		return configerr.New("import", "{MaxPending} %d: want 1 or more events, or 0 for the default", c.MaxPending)
	}
	return nil
}

// Stats says what Import read and wrote.
type Stats struct {
	// Spans the sink took, by kind: runs (one trace each), operators, and
	// other session events (model loading, session initialization).
	Runs, Nodes, Other int64
	// NodeEvents is how many operator (kernel) events the profile holds;
	// all of them are written unless they lie outside every run.
	NodeEvents int64
	// Outside is how many operator events lay inside no model_run: they
	// have no run to belong to and were not written.
	Outside int64
	// Spilled is how many events went through the spill file.
	Spilled int64
	// Warnings are the reader's repairs (the first profile.MaxWarnings);
	// WarningCount counts all of them.
	Warnings     []profile.Warning
	WarningCount int
	// Rejected are the events skipped for impossible times (a negative,
	// non-finite or out-of-range ts or dur), the first profile.MaxWarnings;
	// RejectedCount counts all of them. They make Import fail at the end.
	Rejected      []profile.Warning
	RejectedCount int
	// Bytes is how much of the input was read.
	Bytes int64
}

// Spans returns the number of spans written.
func (s Stats) Spans() int64 { return s.Runs + s.Nodes + s.Other }

// ErrNoRuns is returned (wrapped) when a profile has no model_run event
// (or none that encloses an operator event): it holds no run to import.
var ErrNoRuns = errors.New("no model_run event, so no run to import")

// ErrNoEvents is returned (wrapped) when a profile holds no ONNX Runtime
// event at all (no Session or Node category).
var ErrNoEvents = errors.New("no ONNX Runtime events (categories Session and Node): this is not an ONNX Runtime profile")

// Import reads the profile in r and writes its spans to sink in batches,
// each written before the next is read. It returns what was written even on
// error. Operator events outside every run make an error after everything
// else was written, saying how many.
func Import(ctx context.Context, r io.Reader, sink Sink, cfg Config) (Stats, error) {
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	im := newImporter(ctx, sink, cfg)
	defer im.g.Reset()
	rd := profile.NewReader(r)
	var readErr error
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		if err := im.add(ev); err != nil {
			_ = im.wait() // count what the sink took before failing
			im.st.readerStats(rd)
			return im.st, err
		}
	}
	im.st.readerStats(rd)
	// Events read before a syntax error are whole: write what they hold.
	err := im.flush()
	if werr := im.wait(); err == nil {
		err = werr
	}
	outside, oerr := im.g.Outside()
	im.st.Outside, im.st.Spilled = int64(outside), im.g.Spilled()
	if err == nil {
		err = oerr
	}
	if err != nil {
		return im.st, err
	}
	if readErr != nil {
		return im.st, readErr
	}
	switch {
	case im.events == 0 && im.st.RejectedCount > 0:
		return im.st, fmt.Errorf("%w: %d events had impossible times and were skipped (%s)", ErrNoEvents, im.st.RejectedCount, im.st.Rejected[0])
	case im.events == 0:
		return im.st, ErrNoEvents
	case im.st.Runs == 0 && im.st.Outside > 0:
		return im.st, fmt.Errorf("%w: %d operator events lie outside every run and were not written", ErrNoRuns, im.st.Outside)
	case im.st.Runs == 0:
		return im.st, ErrNoRuns
	case im.st.Outside > 0:
		return im.st, fmt.Errorf("%d of %d operator events lie outside every model_run and were not written", im.st.Outside, im.st.NodeEvents)
	case im.st.RejectedCount > 0:
		return im.st, fmt.Errorf("%w: %d events were skipped, the rest written (first: %s)", ErrImpossibleTimes, im.st.RejectedCount, im.st.Rejected[0])
	}
	return im.st, nil
}

// ErrImpossibleTimes is returned (wrapped) when events were skipped for
// impossible times: a negative, non-finite or out-of-range ts or dur would
// make a span end before it starts, or last centuries.
var ErrImpossibleTimes = errors.New("events with impossible times (negative, not finite, or past 100 years)")

// readerStats copies what the reader counted into s.
func (s *Stats) readerStats(rd *profile.Reader) {
	s.Bytes = rd.Offset()
	s.Warnings, s.WarningCount = rd.Warnings(), rd.WarningCount()
	s.Rejected, s.RejectedCount = rd.Rejected(), rd.RejectedCount()
}

type importer struct {
	ctx    context.Context
	sink   Sink
	opt    Config
	ids    idGen
	origin int64 // Unix ns of profile ts 0
	st     Stats
	events int64 // Session and Node events read

	batch                []Span
	nb                   int
	bRuns, bNodes, bOthr int64 // kinds in the batch being filled

	// One batch at a time is written by a goroutine while the next is
	// filled: spare is the batch it holds, inflight its result (nil when
	// none is out). The reader never gets more than one batch ahead.
	spare    []Span
	inflight chan written

	g       *profile.Grouper
	spanIDs []trace.SpanID

	baseAttrs []attribute.KeyValue
	runAttrs  []attribute.KeyValue
	runDur    metric.Float64Histogram
	nodeDur   metric.Float64Histogram
	arenaPeak metric.Int64Histogram
	runRec    metric.RecordOption
	modelRec  metric.RecordOption
	nodeRecs  map[[2]string]metric.RecordOption
}

func newImporter(ctx context.Context, sink Sink, opt Config) *importer {
	if opt.Model == "" {
		opt.Model = "model"
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 1024
	}
	if opt.MaxPending <= 0 {
		opt.MaxPending = profile.DefaultMaxPending
	}
	mp := opt.MeterProvider
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter(instrument.ScopeName, metric.WithInstrumentationVersion(instrument.Version()))
	im := &importer{
		ctx: ctx, sink: sink, opt: opt, ids: newIDGen(),
		batch:    make([]Span, opt.BatchSize),
		spare:    make([]Span, opt.BatchSize),
		g:        profile.NewGrouper(profile.WithMaxPending(opt.MaxPending), profile.WithSpillDir(opt.SpillDir)),
		nodeRecs: map[[2]string]metric.RecordOption{},
	}
	if !opt.Origin.IsZero() {
		im.origin = opt.Origin.UnixNano()
	}
	model := attribute.String(string(semconv.OnnxruntimeModelNameKey), opt.Model)
	im.baseAttrs = []attribute.KeyValue{model}
	im.runAttrs = append(append([]attribute.KeyValue{model}, opt.RunAttrs...), semconv.OnnxruntimeRunProfiledKey.Bool(true))
	im.runRec = metric.WithAttributeSet(attribute.NewSet(model, semconv.OnnxruntimeRunProfiledKey.Bool(true)))
	im.modelRec = metric.WithAttributeSet(attribute.NewSet(model))
	// The semconv helpers fall back to a no-op instrument on error.
	im.runDur, _ = semconv.NewOnnxruntimeRunDuration(m)
	im.nodeDur, _ = semconv.NewOnnxruntimeNodeDuration(m)
	im.arenaPeak, _ = semconv.NewOnnxruntimeRunMemoryArenaPeak(m)
	return im
}

// add takes one event of the profile.
func (im *importer) add(ev *profile.Event) error {
	switch ev.Category {
	case "Node":
		im.events++
		if !ev.IsKernel() {
			return nil // fence events: no span of their own
		}
		im.st.NodeEvents++
		_, err := im.g.Add(ev)
		return err
	case "Session":
		im.events++
		if ev.IsExecute() || ev.Name == "model_run" {
			run, err := im.g.Add(ev)
			if run == nil || err != nil {
				return err
			}
			return im.writeRun(run)
		}
		sp := im.slot()
		sp.TraceID, sp.SpanID, sp.Parent = im.ids.traceID(), im.ids.spanID(), trace.SpanID{}
		sp.Name = ev.Name
		sp.Start, sp.End = im.at(ev.TS), im.at(ev.TS+ev.Dur)
		sp.Attrs = append(sp.Attrs, im.baseAttrs...)
		if ev.TID != 0 {
			sp.Attrs = append(sp.Attrs, attribute.Int64("thread.id", ev.TID))
		}
		im.bOthr++
		return im.done()
	}
	return nil
}

func (im *importer) at(ts int64) int64 { return im.origin + ts*1000 }

// writeRun writes a run the grouper closed: its operators, nested, then
// the run span.
func (im *importer) writeRun(run *profile.Run) error {
	evs, pl := run.Events, run.Placements
	lo, hi := run.Run.TS, run.Run.TS+run.Run.Dur
	if cap(im.spanIDs) < len(evs) {
		im.spanIDs = make([]trace.SpanID, len(evs))
	}
	ids := im.spanIDs[:len(evs)]

	traceID, runID := im.ids.traceID(), im.ids.spanID()
	for i := range evs {
		if evs[i].IsKernel() {
			ids[i] = im.ids.spanID()
		}
	}
	var peak int64 = -1
	for i := range evs {
		e := &evs[i]
		if !e.IsKernel() {
			continue
		}
		parent := runID
		if p := pl[i].Parent; p >= 0 {
			parent = ids[p]
		}
		sp := im.slot()
		sp.TraceID, sp.SpanID, sp.Parent = traceID, ids[i], parent
		sp.Name = e.OpName
		if sp.Name == "" {
			sp.Name = e.NodeName()
		}
		sp.Start, sp.End = im.at(e.TS), im.at(e.TS+e.Dur)
		sp.Attrs = e.AppendRunAttributes(e.AppendNodeAttributes(append(sp.Attrs, im.baseAttrs...)))
		if e.TID != 0 {
			sp.Attrs = append(sp.Attrs, attribute.Int64("thread.id", e.TID))
		}
		im.bNodes++
		im.nodeDur.Record(im.ctx, float64(pl[i].Self)/1e6, im.nodeRec(e.OpName, e.Provider))
		if e.Memory.Present {
			peak = max(peak, e.Memory.ArenaHeld)
		}
		if err := im.done(); err != nil {
			return err
		}
	}
	sp := im.slot()
	sp.TraceID, sp.SpanID, sp.Parent = traceID, runID, trace.SpanID{}
	sp.Name = "run " + im.opt.Model
	sp.Start, sp.End = im.at(lo), im.at(hi)
	sp.Attrs = append(sp.Attrs, im.runAttrs...)
	if run.Run.TID != 0 {
		sp.Attrs = append(sp.Attrs, attribute.Int64("thread.id", run.Run.TID))
	}
	im.bRuns++
	im.runDur.Record(im.ctx, float64(run.Run.Dur)/1e6, im.runRec)
	if peak >= 0 {
		im.arenaPeak.Record(im.ctx, peak, im.modelRec)
	}
	return im.done()
}

func (im *importer) nodeRec(op, provider string) metric.RecordOption {
	key := [2]string{op, provider}
	o, ok := im.nodeRecs[key]
	if !ok {
		o = metric.WithAttributeSet(attribute.NewSet(im.baseAttrs[0],
			semconv.OnnxruntimeNodeOpTypeKey.String(op),
			semconv.OnnxruntimeExecutionProviderKey.String(provider)))
		im.nodeRecs[key] = o
	}
	return o
}

// slot returns the next span of the batch, its attributes emptied.
func (im *importer) slot() *Span {
	sp := &im.batch[im.nb]
	sp.Attrs = sp.Attrs[:0]
	return sp
}

// done commits the slot; a full batch is written before done returns.
func (im *importer) done() error {
	im.nb++
	if im.nb < len(im.batch) {
		return nil
	}
	return im.flush()
}

// written is the outcome of one batch's write.
type written struct {
	runs, nodes, other int64
	err                error
}

// flush hands the batch to the writer goroutine, after waiting for the
// batch before it: a busy sink holds the reader back.
func (im *importer) flush() error {
	if err := im.wait(); err != nil {
		return err
	}
	if im.nb == 0 {
		return nil
	}
	batch, w := im.batch[:im.nb], written{runs: im.bRuns, nodes: im.bNodes, other: im.bOthr}
	im.inflight = make(chan written, 1)
	go func(ch chan<- written) {
		w.err = im.sink.Write(im.ctx, batch)
		ch <- w
	}(im.inflight)
	im.batch, im.spare = im.spare, im.batch
	im.nb, im.bRuns, im.bNodes, im.bOthr = 0, 0, 0, 0
	return nil
}

// wait waits for the batch being written and counts its spans once the
// sink took them.
func (im *importer) wait() error {
	if im.inflight == nil {
		return nil
	}
	w := <-im.inflight
	im.inflight = nil
	if w.err != nil {
		return w.err
	}
	im.st.Runs += w.runs
	im.st.Nodes += w.nodes
	im.st.Other += w.other
	return nil
}
