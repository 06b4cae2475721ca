package process

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// BenchmarkCollect measures one collection of this process: the
// callback alone, and through an SDK ManualReader.
func BenchmarkCollect(b *testing.B) {
	b.Run("callback", func(b *testing.B) {
		r, err := New()
		if err != nil {
			b.Skip(err)
		}
		defer r.Shutdown(context.Background())
		var o procfstest.Observer
		b.ReportAllocs()
		for b.Loop() {
			r.collect(context.Background(), &o)
		}
	})
	b.Run("sdk", func(b *testing.B) {
		mp, reader := procfstest.NewProvider(b)
		r, err := New(WithMeterProvider(mp))
		if err != nil {
			b.Skip(err)
		}
		defer r.Shutdown(context.Background())
		var rm metricdata.ResourceMetrics
		b.ReportAllocs()
		for b.Loop() {
			if err := reader.Collect(context.Background(), &rm); err != nil {
				b.Fatal(err)
			}
		}
	})
}
