package thermal

import (
	"context"
	"sync"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestCollectAndSnapshotConcurrentSafe(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	r, err := New(WithRoot(expand(t, "server")), provider(reader))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				if _, err := r.Snapshot(); err != nil {
					t.Error(err)
				}
				var rm metricdata.ResourceMetrics
				if err := reader.Collect(context.Background(), &rm); err != nil {
					t.Error(err)
				}
				_ = r.Sensors()
			}
		})
	}
	wg.Wait()
}

func BenchmarkCollect(b *testing.B) {
	reader := sdkmetric.NewManualReader()
	r, err := New(WithRoot(expand(b, "server")), provider(reader))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	var rm metricdata.ResourceMetrics
	b.ReportAllocs()
	for b.Loop() {
		if err := reader.Collect(context.Background(), &rm); err != nil {
			b.Fatal(err)
		}
	}
}
