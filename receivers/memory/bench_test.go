package memory

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// BenchmarkCollect measures one collection of this machine's memory: the
// callback alone, and through an SDK ManualReader.
func BenchmarkCollect(b *testing.B) {
	procfstest.BenchReceiver(b, func(b *testing.B, mp metric.MeterProvider) metric.Callback {
		r, err := New(WithMeterProvider(mp), WithRoot("/"))
		if err != nil {
			b.Skip(err)
		}
		b.Cleanup(func() { r.Shutdown(context.Background()) })
		return r.collect
	})
}
