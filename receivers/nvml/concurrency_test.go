//go:build linux && cgo

package nvml

import (
	"context"
	"sync"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestCollectAndSnapshotConcurrentSafe(t *testing.T) {
	m, script := twoGPUs()
	h := start(t, m)
	h.ready()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 25 {
				if _, err := h.r.Snapshot(context.Background()); err != nil {
					t.Error(err)
				}
				var rm metricdata.ResourceMetrics
				if err := h.reader.Collect(context.Background(), &rm); err != nil {
					t.Error(err)
				}
				_ = h.r.Devices()
				h.step(script)
			}
		})
	}
	wg.Wait()
}

// BenchmarkCollect measures one collection of the two scripted GPUs: the
// receiver's own cost around NVML calls that return at once.
func BenchmarkCollect(b *testing.B) {
	m, _ := twoGPUs()
	reader := sdkmetric.NewManualReader()
	r, err := New(WithInterface(m.lib), WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	if err := r.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	b.ReportAllocs()
	for b.Loop() {
		if err := reader.Collect(context.Background(), &rm); err != nil {
			b.Fatal(err)
		}
	}
}
