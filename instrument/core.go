package instrument

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	upstreamsemconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// core is what both session kinds share: identity, instruments, prebuilt
// attribute sets and the profiler. Everything the Run path needs is built here
// once, so a Run adds one span and one histogram Record and nothing else.
type core struct {
	cfg      config
	tracer   trace.Tracer
	inst     *instruments
	id       string
	spanName string

	baseAttrs   []attribute.KeyValue // model + extra attributes (metrics)
	spanAttrs   []attribute.KeyValue // baseAttrs + session id + providers (spans)
	startOpts   []trace.SpanStartOption
	profOpts    []trace.SpanStartOption
	recOK       []metric.RecordOption
	recProfiled []metric.RecordOption

	batchOpts sync.Map // int64 -> *[2][]trace.SpanStartOption (plain, profiled)

	counts *runCell // shared with sessions of the same attributes

	nodeMu    sync.Mutex
	nodeAttrs map[[2]string]metric.MeasurementOption

	prof    *profiler
	wrapErr error // why a wrapped session cannot be profiled
	gate    *gate
}

// newCore builds what a session shares. It cannot fail: a meter that
// refuses an instrument is reported through otel.Handle and inference goes
// on without that instrument.
func newCore(modelPath string, opts []Option) *core {
	cfg := newConfig(modelPath, opts)
	c := &core{
		cfg:       cfg,
		tracer:    cfg.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version())),
		id:        fmt.Sprintf("%016x", rand.Uint64()),
		spanName:  "run " + cfg.modelName,
		nodeAttrs: make(map[[2]string]metric.MeasurementOption),
	}
	meter := cfg.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	inst, err := newInstruments(meter)
	if err != nil {
		// A broken meter must not stop inference: report and go on with what
		// was created (the API returns no-op instruments on error).
		otel.Handle(fmt.Errorf("ortel: creating instruments: %w", err))
	}
	c.inst = inst

	// Clipped, so that appending to them always copies.
	c.baseAttrs = slices.Clip(append([]attribute.KeyValue{attribute.String(attrModelName, cfg.modelName)}, cfg.attrs...))
	c.spanAttrs = slices.Clip(append(append([]attribute.KeyValue(nil), c.baseAttrs...),
		attribute.String(attrSessionID, c.id),
		attribute.StringSlice(attrExecutionProviders, cfg.providers)))
	c.startOpts, c.profOpts = c.buildStartOpts(-1)
	c.recOK = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(c.baseAttrs, attribute.Bool(attrRunProfiled, false))...))}
	c.recProfiled = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(c.baseAttrs, attribute.Bool(attrRunProfiled, true))...))}
	c.counts = cellFor(cfg.meterProvider, meter, attribute.NewSet(c.baseAttrs...))
	return c
}

// buildStartOpts returns the span start options of a run, without and with
// the profiled flag, carrying the batch size when batch >= 0.
func (c *core) buildStartOpts(batch int64) (plain, profiled []trace.SpanStartOption) {
	attrs := append([]attribute.KeyValue(nil), c.spanAttrs...)
	if batch >= 0 {
		attrs = append(attrs, attribute.Int64(attrBatchSize, batch))
	}
	attrs = slices.Clip(attrs) // the two appends below must not share an array
	plain = []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(append(attrs, attribute.Bool(attrRunProfiled, false))...),
	}
	profiled = []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(append(attrs, attribute.Bool(attrRunProfiled, true))...),
	}
	return plain, profiled
}

// optsForBatch returns cached start options for a batch size. Batch sizes
// are few, so the cache stays small; a lookup does not allocate.
func (c *core) optsForBatch(batch int64, profiled bool) []trace.SpanStartOption {
	if batch < 0 {
		if profiled {
			return c.profOpts
		}
		return c.startOpts
	}
	v, ok := c.batchOpts.Load(batch)
	if !ok {
		p, q := c.buildStartOpts(batch)
		v, _ = c.batchOpts.LoadOrStore(batch, &[2][]trace.SpanStartOption{p, q})
	}
	pair := v.(*[2][]trace.SpanStartOption)
	if profiled {
		return pair[1]
	}
	return pair[0]
}

// begin opens the run span. The caller must call end.
func (c *core) begin(ctx context.Context, batch int64, profiled bool) (context.Context, trace.Span) {
	c.counts.runs.Add(1)
	c.counts.active.Add(1)
	return c.tracer.Start(ctx, c.spanName, c.optsForBatch(batch, profiled)...)
}

// end records the run's duration and closes its span. It returns the run's
// error, as a *RunError carrying its error.type when the run failed.
func (c *core) end(ctx context.Context, span trace.Span, start, end time.Time, err error, profiled bool) error {
	d := end.Sub(start).Seconds()
	if err != nil {
		err = &RunError{Type: runErrorType(err), Err: err}
		c.fail(ctx, span, err, d, profiled)
	} else if profiled {
		c.inst.runDuration.Record(ctx, d, c.recProfiled...)
	} else {
		c.inst.runDuration.Record(ctx, d, c.recOK...)
	}
	span.End()
	c.counts.active.Add(-1)
	return err
}

// fail marks the span and counts the error. Errors are rare, so this path may
// allocate.
func (c *core) fail(ctx context.Context, span trace.Span, err error, d float64, profiled bool) {
	et := errorType(err)
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	span.SetAttributes(attribute.String(attrErrorType, et))
	attrs := append(append([]attribute.KeyValue(nil), c.baseAttrs...), attribute.String(attrErrorType, et))
	c.inst.runErrors.Add(ctx, 1, metric.WithAttributes(attrs...))
	c.inst.runDuration.Record(ctx, d, metric.WithAttributes(append(attrs, attribute.Bool(attrRunProfiled, profiled))...))
}

// recordCreation records the session creation time, as a span and a histogram.
func (c *core) recordCreation(ctx context.Context, start, end time.Time, err error) {
	_, span := c.tracer.Start(ctx, "create_session "+c.cfg.modelName,
		trace.WithTimestamp(start), trace.WithAttributes(c.spanAttrs...))
	attrs := c.baseAttrs
	if err != nil {
		et := runErrorType(err)
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		span.SetAttributes(attribute.String(attrErrorType, et))
		attrs = append(append([]attribute.KeyValue(nil), attrs...), attribute.String(attrErrorType, et))
	}
	span.End(trace.WithTimestamp(end))
	c.inst.sessionCreation.Record(ctx, end.Sub(start).Seconds(), metric.WithAttributes(attrs...))
}

// ErrClosed is returned by Run after Close.
var ErrClosed = errors.New("ortel: session is closed")

// RunError is the error a failed run returns: ONNX Runtime's error (or the
// context's) with the error.type recorded for it. errors.Is and errors.As
// see through it to the underlying error.
type RunError struct {
	Type string // the error.type: canceled, invalid_argument, ort_error, ...
	Err  error
}

func (e *RunError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *RunError) Unwrap() error { return e.Err }

// ErrorType returns the error.type value.
func (e *RunError) ErrorType() string { return e.Type }

// errorType returns the low-cardinality error.type value of err, as stages
// and generations record it: the value of an ErrorType() string method
// anywhere in the chain (a *RunError says how a run failed), canceled or
// deadline_exceeded for context errors, session_closed for ErrClosed, and
// otherwise the error's Go type, as the OpenTelemetry semantic conventions
// recommend for errors without a code.
func errorType(err error) string {
	if err == nil {
		return ""
	}
	var typed interface{ ErrorType() string }
	if errors.As(err, &typed) {
		return typed.ErrorType()
	}
	if t := contextErrorType(err); t != "" {
		return t
	}
	return upstreamsemconv.ErrorType(err).Value.AsString()
}

func contextErrorType(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, ErrClosed):
		return "session_closed"
	}
	return ""
}

// runErrorType classifies an error ONNX Runtime returned for a run or a
// session creation: canceled, deadline_exceeded, invalid_argument,
// out_of_memory, session_closed, or ort_error for any other failure. The Go
// binding does not expose ORT's error codes, so the type is read from the
// message.
func runErrorType(err error) string {
	if t := contextErrorType(err); t != "" {
		return t
	}
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "invalid dimensions"), strings.Contains(msg, "invalid rank"),
		strings.Contains(msg, "unexpected input data type"), strings.Contains(msg, "invalid input name"),
		strings.Contains(msg, "input names"), strings.Contains(msg, "input tensors"),
		strings.Contains(msg, "output tensors"), strings.Contains(msg, "missing input"),
		strings.Contains(msg, "invalid_argument"), strings.Contains(msg, "shape mismatch"):
		return "invalid_argument"
	case strings.Contains(msg, "failed to allocate"), strings.Contains(msg, "out of memory"), strings.Contains(msg, "bad_alloc"):
		return "out_of_memory"
	}
	return "ort_error"
}
