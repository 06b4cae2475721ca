package instrument_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ortel-dev/ortel/instrument"
)

// ExampleGenerations records one generation: a prefill over a 12-token
// prompt, then three decode steps. The runs of the model (not shown) take
// the context Start and Token return, so they nest under the prefill and
// decode spans.
func ExampleGenerations() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())

	// Once per model, with the options of its session.
	gens := instrument.NewGenerations(instrument.WithModelName("decoder"),
		instrument.WithTracerProvider(tp), instrument.WithMeterProvider(mp))

	ctx, g := gens.Start(context.Background(), 12)
	_ = ctx // sess.Run(ctx, prompt inputs, outputs): the prefill
	for i := 0; i < 4; i++ {
		ctx = g.Token() // a token was picked; ctx now carries the decode span
		// sess.Run(ctx, next-token inputs with the present tensors as past, outputs)
	}
	g.SetKVCacheBytes(64 << 10) // instrument.KVCacheBytes(outputNames, outputs)
	s := g.End(nil)

	fmt.Println(s.InputTokens, "input tokens,", s.OutputTokens, "output tokens")
	for _, sp := range rec.Ended() {
		fmt.Println(sp.Name())
	}
	// Output:
	// 12 input tokens, 4 output tokens
	// prefill
	// decode
	// text_completion decoder
}
