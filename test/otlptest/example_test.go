package otlptest_test

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ortel-dev/ortel/test/otlptest"
)

func Example() {
	r, err := otlptest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(r.Endpoint()), otlptracegrpc.WithInsecure())
	if err != nil {
		fmt.Println(err)
		return
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	_, span := tp.Tracer("example").Start(ctx, "onnxruntime.run")
	span.End()
	_ = tp.ForceFlush(ctx)

	if err := r.WaitSpans(ctx, otlptest.HasSpanNamed("onnxruntime.run")); err != nil {
		fmt.Println(err)
		return
	}
	got := r.Spans()[0]
	fmt.Println(got.GetName(), got.SpanID() == span.SpanContext().SpanID().String())
	_ = tp.Shutdown(ctx)
	// Output: onnxruntime.run true
}
