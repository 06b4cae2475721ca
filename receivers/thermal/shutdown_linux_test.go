package thermal

import (
	"context"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestShutdownDuringCollect: Shutdown while collections run must not
// deadlock (the SDK holds its lock while the callback runs).
func TestShutdownDuringCollect(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	r, err := New(WithRoot(expand(t, "server")), provider(reader))
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				var rm metricdata.ResourceMetrics
				reader.Collect(context.Background(), &rm)
			}
		})
	}
	done := make(chan error, 1)
	go func() { done <- r.Shutdown(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return while collections ran: deadlock")
	}
	close(stop)
	wg.Wait()
}
