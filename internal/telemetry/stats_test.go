package telemetry

import (
	"context"
	"errors"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

type recordingProcessor struct{ ended int }

func (p *recordingProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (p *recordingProcessor) OnEnd(sdktrace.ReadOnlySpan)                     { p.ended++ }
func (p *recordingProcessor) Shutdown(context.Context) error                  { return nil }
func (p *recordingProcessor) ForceFlush(context.Context) error                { return nil }

type fakeExporter struct {
	calls int
	err   error
}

func (e *fakeExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	e.calls++
	return e.err
}
func (e *fakeExporter) Shutdown(context.Context) error { return nil }

func span(sampled bool) sdktrace.ReadOnlySpan {
	flags := trace.TraceFlags(0)
	if sampled {
		flags = trace.FlagsSampled
	}
	return tracetest.SpanStub{SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: flags,
	})}.Snapshot()
}

func TestCountingProcessorLimit(t *testing.T) {
	st := &stats{}
	next := &recordingProcessor{}
	p := &countingProcessor{next: next, stats: st, limit: 3}
	for range 5 {
		p.OnEnd(span(true))
	}
	p.OnEnd(span(false)) // not sampled: not exported, not counted
	got := st.snapshot()
	want := Stats{SpansEnded: 5, SpansDropped: 2, SpansQueueFull: 2, SpansPending: 3}
	if got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	if next.ended != 3 {
		t.Errorf("batch processor got %d spans, want 3 (the limit)", next.ended)
	}

	// Exporting frees the queue for more.
	abortCtx, abort := context.WithCancel(context.Background())
	defer abort()
	exp := &fakeExporter{}
	e := &countingSpanExporter{next: exp, stats: st, abort: abortCtx, done: make(chan struct{})}
	three := []sdktrace.ReadOnlySpan{span(true), span(true), span(true)}
	if err := e.ExportSpans(t.Context(), three); err != nil {
		t.Fatal(err)
	}
	p.OnEnd(span(true))
	if next.ended != 4 {
		t.Errorf("after an export, a new span was still turned away")
	}
	got = st.snapshot()
	want = Stats{SpansEnded: 6, SpansExported: 3, SpansDropped: 2, SpansQueueFull: 2, SpansPending: 1}
	if got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}

	// A failed export counts as dropped and is remembered.
	exp.err = errors.New("collector said no")
	if err := e.ExportSpans(t.Context(), three[:1]); err == nil {
		t.Error("failed export returned nil")
	}
	got = st.snapshot()
	if got.SpansDropped != 3 || got.SpansPending != 0 || got.LastError == nil {
		t.Errorf("after a failed export: %+v", got)
	}

	// After Shutdown aborts, exports are dropped without trying and
	// without an error the SDK would log.
	abort()
	calls := exp.calls
	if err := e.ExportSpans(t.Context(), three[:2]); err != nil {
		t.Errorf("aborted export returned %v, want nil", err)
	}
	if exp.calls != calls {
		t.Error("aborted export still called the exporter")
	}
	st.final.Store(true)
	got = st.snapshot()
	if got.SpansDropped != got.SpansEnded-got.SpansExported || got.SpansPending != 0 {
		t.Errorf("final Stats do not account for every span: %+v", got)
	}
}
