package spanbatch_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ortel-dev/ortel/instrument/spanbatch"
)

// Any exporter works: an OTLP one (otlptracegrpc.New, otlptracehttp.New)
// in a service; here an in-memory one, to show what it received.
func Example() {
	exp := tracetest.NewInMemoryExporter()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(spanbatch.New(exp)))

	ctx := context.Background()
	for range 3 {
		_, span := tp.Tracer("example").Start(ctx, "onnxruntime.run")
		span.End() // appended to the batch: no goroutine is woken
	}
	// A full batch or the batch timeout exports; ForceFlush and Shutdown
	// export what is queued at once.
	if err := tp.ForceFlush(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println(len(exp.GetSpans()), "spans exported")
	_ = tp.Shutdown(ctx)
	// Output: 3 spans exported
}
