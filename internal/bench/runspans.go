package bench

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ortel-dev/ortel/semconv"
)

// profiledOnly is the TracerProvider the bench's sessions get when
// Config.ProfiledRunSpansOnly is set: the span of a run that was not profiled
// (every measured, warm-up and first run) is not recorded; the profiled
// runs' spans (the profiling pass, runs profiled on demand) and their
// operator spans are, and so is every other span (session creation, the
// analysis) and a run span with a parent (a generation's decode steps,
// --generate, whose spans are per generation). The runs' durations are
// in the metrics either way.
type profiledOnly struct {
	embedded.TracerProvider
	next trace.TracerProvider
	// runSpan is the name of a run's span ("run MODEL").
	runSpan string
}

func (p profiledOnly) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return profiledOnlyTracer{next: p.next.Tracer(name, opts...), runSpan: p.runSpan}
}

type profiledOnlyTracer struct {
	embedded.Tracer
	next    trace.Tracer
	runSpan string
}

func (t profiledOnlyTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if name != t.runSpan || trace.SpanContextFromContext(ctx).IsValid() || profiledRun(opts) {
		return t.next.Start(ctx, name, opts...)
	}
	return noop.Tracer{}.Start(ctx, name, opts...)
}

// profiledRun reports whether a run span's start options mark it
// profiled (semconv.OnnxruntimeRunProfiledKey, set when it starts).
func profiledRun(opts []trace.SpanStartOption) bool {
	cfg := trace.NewSpanStartConfig(opts...)
	for _, kv := range cfg.Attributes() {
		if kv.Key == semconv.OnnxruntimeRunProfiledKey {
			return kv.Value.AsBool()
		}
	}
	return false
}
