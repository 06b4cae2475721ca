package telemetry

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/test/otlptest"
)

// BenchmarkSpanEnd measures starting and ending one span: against the SDK
// with no processor and with one that does nothing (the floors: a
// processor makes End snapshot the span), in file mode, and with a collector that
// never answers (after the queue fills, every span takes the drop path).
// Run: go test -run '^$' -bench SpanEnd ./internal/telemetry/
func BenchmarkSpanEnd(b *testing.B) {
	run := func(b *testing.B, tp trace.TracerProvider) {
		b.Helper()
		tr := tp.Tracer("bench")
		ctx := b.Context()
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			_, s := tr.Start(ctx, "onnxruntime.run")
			s.End()
		}
	}
	b.Run("sdk-floor", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider()
		defer func() { _ = tp.Shutdown(b.Context()) }()
		run(b, tp)
	})
	b.Run("sdk-floor-with-processor", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(noopProcessor{}))
		defer func() { _ = tp.Shutdown(b.Context()) }()
		run(b, tp)
	})
	b.Run("file-mode", func(b *testing.B) {
		b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
		tel, err := Setup(b.Context(), Config{OutputDir: b.TempDir(), MetricInterval: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = tel.Shutdown(b.Context()) }()
		run(b, tel.TracerProvider)
	})
	b.Run("collector-hung", func(b *testing.B) {
		r, err := otlptest.Start()
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		r.SetDelay(time.Hour)
		tel, err := Setup(b.Context(), Config{Endpoint: "http://" + r.Endpoint(), ShutdownTimeout: 100 * time.Millisecond, MetricInterval: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { _ = tel.Shutdown(b.Context()) }()
		run(b, tel.TracerProvider)
	})
}

// noopProcessor does nothing; with it, End pays for the span snapshot
// every real processor gets.
type noopProcessor struct{}

func (noopProcessor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (noopProcessor) OnEnd(sdktrace.ReadOnlySpan)                     {}
func (noopProcessor) Shutdown(context.Context) error                  { return nil }
func (noopProcessor) ForceFlush(context.Context) error                { return nil }
