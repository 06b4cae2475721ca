package procfstest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// BenchCollect measures one collection through reader: the callbacks
// registered on its MeterProvider with the SDK's own cost.
func BenchCollect(b *testing.B, reader *sdkmetric.ManualReader) {
	var rm metricdata.ResourceMetrics
	b.ReportAllocs()
	for b.Loop() {
		if err := reader.Collect(context.Background(), &rm); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchCallback measures one call of the callback f alone, observing into
// an Observer that only counts: the receiver's own cost, without the
// SDK's. f's errors are left to the tests.
func BenchCallback(b *testing.B, f metric.Callback) {
	var o Observer
	b.ReportAllocs()
	for b.Loop() {
		f(context.Background(), &o)
	}
}

// BenchReceiver runs two sub-benchmarks of one collection: "callback",
// the callback alone (BenchCallback), and "sdk", through a ManualReader
// (BenchCollect). start creates the receiver with mp as its MeterProvider
// (nil for "callback": the global one), skips b when the receiver is
// unsupported here, shuts it down with b.Cleanup, and returns its callback.
func BenchReceiver(b *testing.B, start func(b *testing.B, mp metric.MeterProvider) metric.Callback) {
	b.Run("callback", func(b *testing.B) {
		BenchCallback(b, start(b, nil))
	})
	b.Run("sdk", func(b *testing.B) {
		mp, reader := NewProvider(b)
		start(b, mp)
		BenchCollect(b, reader)
	})
}
