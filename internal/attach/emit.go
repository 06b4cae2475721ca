package attach

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	pid    uint32
	runs   atomic.Int64 // the runs seen
	active int64        // set by the callback from the probes' map
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
	// attached reports whether a process's probes are on now (nil: always):
	// the calls in flight of a process whose probes are off are unknown,
	// so they are not reported.
	attached func(pid uint32) bool

	// share is the share of the time the probes are attached (1: always):
	// counts are reported divided by it, and carry it as
	// onnxruntime.run.sampled_share when below 1.
	share float64
	// spanRatio is the share of runs that get a span; spanAcc accumulates
	// it, one span each time it passes 1 (the Run loop's goroutine only).
	spanRatio, spanAcc float64
	// rate bounds the runs per second that become spans and points.
	rate rateLimit
	// errAcc accumulates 1/share per failed run and error attribute set;
	// whole units are added to the error counter (the Run loop only).
	errAcc map[attribute.Distinct]float64

	mu       sync.Mutex
	sessions map[sessionKey]*session
	procs    map[uint32][]attribute.KeyValue
	cells    map[attribute.Distinct]*cell
	list     []*cell
	procAttr func(pid uint32) []attribute.KeyValue

	nRuns, nErrors, nCreates, nBad, nSpans, nShed atomic.Int64
}

// rateLimit counts runs per second of the probes' clock, per process and
// in all, against their limits (0: none). The Run loop's goroutine only.
type rateLimit struct {
	process, node int
	second        uint64 // the second counted, of CLOCK_MONOTONIC
	all           int
	per           map[uint32]int
}

// admit counts one run of pid that ended at end (CLOCK_MONOTONIC ns) and
// reports whether it is within the limits.
func (r *rateLimit) admit(pid uint32, end uint64) bool {
	if r.process == 0 && r.node == 0 {
		return true
	}
	if sec := end / 1e9; sec != r.second || r.per == nil {
		r.second, r.all, r.per = sec, 0, map[uint32]int{}
	}
	if (r.node > 0 && r.all >= r.node) || (r.process > 0 && r.per[pid] >= r.process) {
		return false
	}
	r.all++
	r.per[pid]++
	return true
}

// newEmitter makes the emitter and its instruments; setup, when not nil,
// completes it before its callback is registered (a collection may run
// the callback at once).
func newEmitter(cfg config, procAttr func(uint32) []attribute.KeyValue, setup func(*emitter)) *emitter {
	e := &emitter{
		tracer:    cfg.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(instrument.Version())),
		sessions:  map[sessionKey]*session{},
		procs:     map[uint32][]attribute.KeyValue{},
		cells:     map[attribute.Distinct]*cell{},
		procAttr:  procAttr,
		share:     1,
		spanRatio: cfg.spanRatio,
		errAcc:    map[attribute.Distinct]float64{},
	}
	e.monoToWall = monoOffset()
	m := cfg.mp.Meter(ScopeName, metric.WithInstrumentationVersion(instrument.Version()))
	var errs [6]error
	e.runDuration, errs[0] = semconv.NewOnnxruntimeRunDuration(m)
	e.runErrors, errs[1] = semconv.NewOnnxruntimeRunErrors(m)
	e.sessionCreation, errs[2] = semconv.NewOnnxruntimeSessionCreationDuration(m)
	e.runs, errs[3] = semconv.NewOnnxruntimeRuns(m)
	e.active, errs[4] = semconv.NewOnnxruntimeRunActive(m)
	if setup != nil {
		setup(e)
	}
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
		o.ObserveInt64(e.runs, e.estimate(c.runs.Load()), c.opt)
		if e.attached == nil || e.attached(c.pid) {
			o.ObserveInt64(e.active, c.active, c.opt)
		}
	}
	e.mu.Unlock()
	return nil
}

// estimate is the number of runs n seen stands for: n divided by the
// share of the time the probes were attached. It grows with n, so the
// counter stays monotonic.
func (e *emitter) estimate(n int64) int64 {
	if e.share >= 1 {
		return n
	}
	return int64(math.Round(float64(n) / e.share))
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
	if e.share < 1 {
		s.baseAttrs = append(s.baseAttrs, semconv.OnnxruntimeRunSampledShare(e.share))
	}
	s.spanAttrs = append(append([]attribute.KeyValue(nil), s.baseAttrs...), semconv.OnnxruntimeSessionID(s.id))
	set := attribute.NewSet(s.baseAttrs...)
	s.recOK = metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue(nil), s.baseAttrs...), semconv.OnnxruntimeRunProfiled(false))...))
	c, ok := e.cells[set.Equivalent()]
	if !ok {
		c = &cell{opt: metric.WithAttributeSet(set), pid: pid}
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
	s.cell.runs.Add(1)
	e.nRuns.Add(1)
	var attrs []attribute.KeyValue // of a failed run
	if ev.ret != 0 {
		e.nErrors.Add(1)
		typ, _ := errorType(ev.session)
		attrs = append(append([]attribute.KeyValue(nil), s.baseAttrs...), upstream.ErrorTypeKey.String(typ))
		e.countError(ctx, attrs)
	}
	if !e.rate.admit(ev.pid, ev.end) {
		e.nShed.Add(1) // counted above; its span and point are shed
		return
	}
	d := float64(ev.end-ev.start) / 1e9
	if ev.ret != 0 {
		e.runDuration.Record(ctx, d, metric.WithAttributes(append(attrs, semconv.OnnxruntimeRunProfiled(false))...))
	} else {
		e.runDuration.Record(ctx, d, s.recOK)
	}
	if e.spanAcc += e.spanRatio; e.spanAcc < 1 {
		return
	}
	e.spanAcc--
	e.nSpans.Add(1)
	_, span := e.tracer.Start(ctx, s.spanName, trace.WithTimestamp(e.wall(ev.start)),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(s.spanAttrs...))
	if ev.ret != 0 {
		typ, desc := errorType(ev.session)
		span.SetStatus(codes.Error, desc)
		span.SetAttributes(upstream.ErrorTypeKey.String(typ))
	}
	span.End(trace.WithTimestamp(e.wall(ev.end)))
}

// countError adds one failed run to the error counter: 1 when every run
// is seen, else 1/share accumulated per attribute set and added in whole
// units, so the count is an estimate like the run count.
func (e *emitter) countError(ctx context.Context, attrs []attribute.KeyValue) {
	set := attribute.NewSet(attrs...)
	if e.share >= 1 {
		e.runErrors.Add(ctx, 1, metric.WithAttributeSet(set))
		return
	}
	k := set.Equivalent()
	acc := e.errAcc[k] + 1/e.share
	if n := int64(acc); n > 0 {
		e.runErrors.Add(ctx, n, metric.WithAttributeSet(set))
		acc -= float64(n)
	}
	e.errAcc[k] = acc
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
