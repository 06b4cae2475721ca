package instrument

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/semconv"
)

// Pipeline marks the stages of an inference pipeline (decode, preprocess,
// detect, recognize, ...). Each stage is a span, child of the span in the
// context it starts from (an HTTP request, a frame), and a duration in the
// ortel.stage.duration histogram. Runs started with the stage's context nest
// under it, so a trace reads request → stage → run → operator.
//
// A Pipeline is safe for concurrent use.
type Pipeline struct {
	name      string
	tracer    trace.Tracer
	duration  metric.Float64Histogram
	queueWait metric.Float64Histogram
	attrs     []attribute.KeyValue

	mu     sync.RWMutex
	stages map[string]*stageKind
}

// stageKind holds what every stage of one name shares, built once.
type stageKind struct {
	startOpts []trace.SpanStartOption
	recOK     []metric.RecordOption // a slice: passing it with ... does not allocate
	attrs     []attribute.KeyValue
}

// NewPipeline returns a Pipeline named name (ortel.pipeline.name). Options
// that do not concern pipelines (model name, profiling) are ignored.
func NewPipeline(name string, opts ...Option) *Pipeline {
	cfg := newConfig("", opts)
	p := &Pipeline{
		name:   name,
		tracer: cfg.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version())),
		attrs:  append([]attribute.KeyValue{attribute.String(attrPipelineName, name)}, cfg.attrs...),
		stages: make(map[string]*stageKind),
	}
	m := cfg.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	var err error
	p.duration, err = semconv.NewOrtelStageDuration(m)
	if err != nil {
		otel.Handle(fmt.Errorf("ortel: creating the stage histogram: %w", err))
	}
	p.queueWait, err = semconv.NewOrtelStageQueueDuration(m)
	if err != nil {
		otel.Handle(fmt.Errorf("ortel: creating the stage queue histogram: %w", err))
	}
	return p
}

func (p *Pipeline) kind(name string) *stageKind {
	p.mu.RLock()
	k := p.stages[name]
	p.mu.RUnlock()
	if k != nil {
		return k
	}
	attrs := append(append([]attribute.KeyValue(nil), p.attrs...), attribute.String(attrStageName, name))
	k = &stageKind{
		startOpts: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attrs...),
		},
		recOK: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))},
		attrs: attrs,
	}
	p.mu.Lock()
	if k2, ok := p.stages[name]; ok {
		k = k2
	} else {
		p.stages[name] = k
	}
	p.mu.Unlock()
	return k
}

// Stage is one running pipeline stage. End it exactly once.
type Stage struct {
	p     *Pipeline
	k     *stageKind
	span  trace.Span
	ctx   context.Context
	start time.Time
}

// StartStage opens stage name as a child of the span in ctx. The returned
// context carries the stage's span: pass it to the runs of the stage.
func (p *Pipeline) StartStage(ctx context.Context, name string) (context.Context, Stage) {
	k := p.kind(name)
	ctx, span := p.tracer.Start(ctx, name, k.startOpts...)
	return ctx, Stage{p: p, k: k, span: span, ctx: ctx, start: time.Now()}
}

// StartStageQueued is StartStage for a work item (a frame, a request) that
// waited in a queue since queuedAt before this stage took it: the wait
// becomes a span named "queue {stage}", a sibling just before the stage's
// span, and a value of the ortel.stage.queue.duration histogram. A zero or
// future queuedAt records no wait.
func (p *Pipeline) StartStageQueued(ctx context.Context, name string, queuedAt time.Time) (context.Context, Stage) {
	k := p.kind(name)
	now := time.Now()
	if !queuedAt.IsZero() && queuedAt.Before(now) {
		_, q := p.tracer.Start(ctx, "queue "+name, append([]trace.SpanStartOption{trace.WithTimestamp(queuedAt)}, k.startOpts...)...)
		q.End(trace.WithTimestamp(now))
		p.queueWait.Record(ctx, now.Sub(queuedAt).Seconds(), k.recOK...)
	}
	sctx, span := p.tracer.Start(ctx, name, append([]trace.SpanStartOption{trace.WithTimestamp(now)}, k.startOpts...)...)
	return sctx, Stage{p: p, k: k, span: span, ctx: sctx, start: now}
}

// End closes the stage. A non-nil err marks the stage failed: span status
// Error and error.type on the span and the histogram.
func (s Stage) End(err error) {
	d := time.Since(s.start).Seconds()
	if err != nil {
		et := errorType(err)
		s.span.RecordError(err)
		s.span.SetStatus(codes.Error, err.Error())
		s.span.SetAttributes(attribute.String(attrErrorType, et))
		s.p.duration.Record(s.ctx, d, metric.WithAttributes(append(append([]attribute.KeyValue(nil), s.k.attrs...), attribute.String(attrErrorType, et))...))
	} else {
		s.p.duration.Record(s.ctx, d, s.k.recOK...)
	}
	s.span.End()
}

// Span returns the stage's span, to add events or attributes.
func (s Stage) Span() trace.Span { return s.span }

var (
	defaultPipelineOnce sync.Once
	defaultPipeline     *Pipeline
)

// StartStage opens a stage of the default pipeline ("default"), which uses
// the global providers. Use NewPipeline to name the pipeline or inject
// providers.
func StartStage(ctx context.Context, name string) (context.Context, Stage) {
	defaultPipelineOnce.Do(func() { defaultPipeline = NewPipeline("default") })
	return defaultPipeline.StartStage(ctx, name)
}
