package attach

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	upstream "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/semconv"
)

// event is one record from the probes.
type event struct {
	kind       uint64
	pid, tid   uint32
	start, end uint64 // CLOCK_MONOTONIC, ns
	arg        uint64 // Run: the session; CreateSession: the path pointer
	ret        uint64 // the returned OrtStatus*; 0 on success
	session    uint64 // CreateSession: the new session; Run: the error code
	path       string // CreateSession only
}

// errShortEvent is a record shorter than an event header.
var errShortEvent = errors.New("event shorter than its 64-byte header")

// parseEvent decodes a ring buffer record.
func parseEvent(b []byte) (event, error) {
	if len(b) < evHeader {
		return event{}, fmt.Errorf("%w (%d bytes)", errShortEvent, len(b))
	}
	le := binary.LittleEndian
	pt := le.Uint64(b[evPidTgid:])
	e := event{
		kind: le.Uint64(b[evKind:]), pid: uint32(pt >> 32), tid: uint32(pt),
		start: le.Uint64(b[evStart:]), end: le.Uint64(b[evEnd:]),
		arg: le.Uint64(b[evArg:]), ret: le.Uint64(b[evRet:]), session: le.Uint64(b[evSession:]),
	}
	if e.kind < evRun || e.kind > evReleaseSession {
		return event{}, fmt.Errorf("event of unknown kind %d", e.kind)
	}
	if e.kind == evCreateSession && len(b) > evHeader {
		p := b[evHeader:]
		for i, c := range p {
			if c == 0 {
				p = p[:i]
				break
			}
		}
		e.path = string(p)
	}
	return e, nil
}

// ortErrorNames are OrtErrorCode's names (onnxruntime_c_api.h).
var ortErrorNames = []string{"ORT_OK", "ORT_FAIL", "ORT_INVALID_ARGUMENT", "ORT_NO_SUCHFILE", "ORT_NO_MODEL",
	"ORT_ENGINE_ERROR", "ORT_RUNTIME_EXCEPTION", "ORT_INVALID_PROTOBUF", "ORT_MODEL_LOADED",
	"ORT_NOT_IMPLEMENTED", "ORT_INVALID_GRAPH", "ORT_EP_FAIL", "ORT_MODEL_LOAD_CANCELED",
	"ORT_MODEL_REQUIRES_COMPILATION", "ORT_NOT_FOUND"}

// errorType maps an OrtErrorCode to the error.type values the in-process
// instrumentation records, and describes it.
func errorType(code uint64) (typ, desc string) {
	name := fmt.Sprintf("error code %d", code)
	if code < uint64(len(ortErrorNames)) {
		name = ortErrorNames[code]
	}
	desc = "ONNX Runtime returned " + name
	if code == 2 {
		return "invalid_argument", desc
	}
	return "ort_error", desc
}

// cell counts the runs of one attribute set (one model in one process).
type cell struct {
	opt    metric.MeasurementOption
	runs   atomic.Int64
	active int64 // set by the callback from the probes' map
}

// session is what is known of one ORT session in one process.
type session struct {
	model     string // "" when the session was created before attach
	id        string
	spanName  string
	spanAttrs []attribute.KeyValue
	baseAttrs []attribute.KeyValue // metric attributes
	recOK     metric.RecordOption
	cell      *cell
}

type sessionKey struct {
	pid uint32
	ptr uint64
}

// emitter turns events into spans and metrics.
type emitter struct {
	tracer          trace.Tracer
	runDuration     metric.Float64Histogram
	runErrors       metric.Int64Counter
	sessionCreation metric.Float64Histogram
	runs            metric.Int64ObservableCounter
	active          metric.Int64ObservableUpDownCounter
	reg             metric.Registration

	// monoToWall converts CLOCK_MONOTONIC nanoseconds to Unix nanoseconds.
	monoToWall int64

	// activeCount counts calls in flight per (pid, session); set by the
	// owner (from the probes' map) before each collection.
	activeCount func() map[sessionKey]int64

	mu       sync.Mutex
	sessions map[sessionKey]*session
	procs    map[uint32][]attribute.KeyValue
	cells    map[attribute.Distinct]*cell
	list     []*cell
	procAttr func(pid uint32) []attribute.KeyValue

	nRuns, nErrors, nCreates, nBad atomic.Int64
}

func newEmitter(cfg Config, procAttr func(uint32) []attribute.KeyValue) *emitter {
	e := &emitter{
		tracer:   cfg.TracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(instrument.Version())),
		sessions: map[sessionKey]*session{},
		procs:    map[uint32][]attribute.KeyValue{},
		cells:    map[attribute.Distinct]*cell{},
		procAttr: procAttr,
	}
	e.monoToWall = monoOffset()
	m := cfg.MeterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(instrument.Version()))
	var errs [6]error
	e.runDuration, errs[0] = semconv.NewOnnxruntimeRunDuration(m)
	e.runErrors, errs[1] = semconv.NewOnnxruntimeRunErrors(m)
	e.sessionCreation, errs[2] = semconv.NewOnnxruntimeSessionCreationDuration(m)
	e.runs, errs[3] = semconv.NewOnnxruntimeRuns(m)
	e.active, errs[4] = semconv.NewOnnxruntimeRunActive(m)
	e.reg, errs[5] = m.RegisterCallback(e.observe, e.runs, e.active)
	if err := errors.Join(errs[:]...); err != nil {
		otel.Handle(fmt.Errorf("ortel attach: creating instruments: %w", err))
	}
	return e
}

// observe reports the run counts and the calls in flight.
func (e *emitter) observe(_ context.Context, o metric.Observer) error {
	var inflight map[sessionKey]int64
	if e.activeCount != nil {
		inflight = e.activeCount()
	}
	e.mu.Lock()
	for _, c := range e.list {
		c.active = 0
	}
	for k, n := range inflight {
		if s := e.sessions[k]; s != nil {
			s.cell.active += n
		}
	}
	list := e.list
	for _, c := range list {
		o.ObserveInt64(e.runs, c.runs.Load(), c.opt)
		o.ObserveInt64(e.active, c.active, c.opt)
	}
	e.mu.Unlock()
	return nil
}

func (e *emitter) wall(mono uint64) time.Time {
	return time.Unix(0, int64(mono)+e.monoToWall)
}

// handle emits what one event says.
func (e *emitter) handle(ev event) {
	switch ev.kind {
	case evRun, evRunWithBinding:
		e.run(ev)
	case evCreateSession, evCreateSessionFromArray:
		e.create(ev)
	case evReleaseSession:
		e.mu.Lock()
		delete(e.sessions, sessionKey{ev.pid, ev.arg})
		e.mu.Unlock()
	}
}

// sessionFor returns the session at ptr in pid, creating an entry for a
// session made before attach (its model is unknown).
func (e *emitter) sessionFor(pid uint32, ptr uint64) *session {
	e.mu.Lock()
	defer e.mu.Unlock()
	k := sessionKey{pid, ptr}
	if s := e.sessions[k]; s != nil {
		return s
	}
	s := e.newSessionLocked(pid, ptr, "")
	e.sessions[k] = s
	return s
}

// newSessionLocked builds a session's prebuilt attributes. e.mu is held.
func (e *emitter) newSessionLocked(pid uint32, ptr uint64, model string) *session {
	proc, ok := e.procs[pid]
	if !ok {
		proc = e.procAttr(pid)
		e.procs[pid] = proc
	}
	s := &session{model: model, id: fmt.Sprintf("%d:%#x", pid, ptr)}
	if model != "" {
		s.spanName = "run " + model
		s.baseAttrs = append(s.baseAttrs, semconv.OnnxruntimeModelName(model))
	} else {
		s.spanName = "run"
	}
	s.baseAttrs = append(s.baseAttrs, proc...)
	s.spanAttrs = append(append([]attribute.KeyValue(nil), s.baseAttrs...), semconv.OnnxruntimeSessionID(s.id))
	set := attribute.NewSet(s.baseAttrs...)
	s.recOK = metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue(nil), s.baseAttrs...), semconv.OnnxruntimeRunProfiled(false))...))
	c, ok := e.cells[set.Equivalent()]
	if !ok {
		c = &cell{opt: metric.WithAttributeSet(set)}
		e.cells[set.Equivalent()] = c
		e.list = append(e.list, c)
	}
	s.cell = c
	return s
}

func (e *emitter) run(ev event) {
	if ev.end < ev.start {
		e.nBad.Add(1)
		return
	}
	s := e.sessionFor(ev.pid, ev.arg)
	ctx := context.Background()
	start, end := e.wall(ev.start), e.wall(ev.end)
	_, span := e.tracer.Start(ctx, s.spanName, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(s.spanAttrs...))
	d := float64(ev.end-ev.start) / 1e9
	s.cell.runs.Add(1)
	e.nRuns.Add(1)
	if ev.ret != 0 {
		e.nErrors.Add(1)
		typ, desc := errorType(ev.session)
		span.SetStatus(codes.Error, desc)
		span.SetAttributes(upstream.ErrorTypeKey.String(typ))
		attrs := append(append([]attribute.KeyValue(nil), s.baseAttrs...), upstream.ErrorTypeKey.String(typ))
		e.runErrors.Add(ctx, 1, metric.WithAttributes(attrs...))
		e.runDuration.Record(ctx, d, metric.WithAttributes(append(attrs, semconv.OnnxruntimeRunProfiled(false))...))
	} else {
		e.runDuration.Record(ctx, d, s.recOK)
	}
	span.End(trace.WithTimestamp(end))
}

func (e *emitter) create(ev event) {
	if ev.end < ev.start {
		e.nBad.Add(1)
		return
	}
	model := "model"
	if ev.path != "" {
		model = instrument.ModelName(ev.path)
	}
	e.mu.Lock()
	s := e.newSessionLocked(ev.pid, ev.session, model)
	if ev.ret == 0 && ev.session != 0 {
		e.sessions[sessionKey{ev.pid, ev.session}] = s
	}
	e.mu.Unlock()
	e.nCreates.Add(1)
	ctx := context.Background()
	_, span := e.tracer.Start(ctx, "create_session "+model, trace.WithTimestamp(e.wall(ev.start)),
		trace.WithAttributes(s.spanAttrs...))
	attrs := s.baseAttrs
	if ev.ret != 0 {
		typ := "ort_error"
		span.SetStatus(codes.Error, "ONNX Runtime returned an error from CreateSession")
		span.SetAttributes(upstream.ErrorTypeKey.String(typ))
		attrs = append(append([]attribute.KeyValue(nil), attrs...), upstream.ErrorTypeKey.String(typ))
	}
	span.End(trace.WithTimestamp(e.wall(ev.end)))
	e.sessionCreation.Record(ctx, float64(ev.end-ev.start)/1e9, metric.WithAttributes(attrs...))
}

// forgetExited drops what is known of processes that are gone (with
// WithLibrary, processes come and go).
func (e *emitter) forgetExited(alive func(int) bool) {
	e.mu.Lock()
	var gone []uint32
	for pid := range e.procs {
		if !alive(int(pid)) {
			gone = append(gone, pid)
		}
	}
	e.mu.Unlock()
	for _, pid := range gone {
		e.forgetProcess(pid)
	}
}

// forgetProcess drops what is known of an exited process.
func (e *emitter) forgetProcess(pid uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.sessions {
		if k.pid == pid {
			delete(e.sessions, k)
		}
	}
	delete(e.procs, pid)
}
