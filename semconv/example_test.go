package semconv_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/ortel-dev/ortel/semconv"
)

// A library creates its instruments once, with the registry's name, unit,
// description and bucket boundaries, and records with registry attributes.
func ExampleNewOnnxruntimeRunDuration() {
	var meter metric.Meter = noop.NewMeterProvider().Meter("example")
	runDuration, err := semconv.NewOnnxruntimeRunDuration(meter)
	if err != nil {
		panic(err)
	}
	attrs := metric.WithAttributes(
		semconv.OnnxruntimeModelName("ch_PP-OCRv4_det_infer"),
		semconv.OnnxruntimeRunProfiled(false),
	)
	runDuration.Record(context.Background(), 0.0123, attrs)
	fmt.Println(semconv.OnnxruntimeRunDurationName, semconv.OnnxruntimeRunDurationUnit)
	// Output: onnxruntime.run.duration s
}

// The Metrics table describes every registered metric.
func ExampleLookupMetric() {
	m, ok := semconv.LookupMetric("hw.energy")
	fmt.Println(ok, m.Instrument, m.Kind, m.Unit, m.Upstream, m.Required)
	// Output: true counter Float64ObservableCounter J true [hw.id hw.type]
}
