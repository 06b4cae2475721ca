//go:build linux

package memory_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/memory"
)

// Register the receiver on a MeterProvider and collect once. The root here
// is a fixture tree of a 16 GB machine with 8 GiB of swap; leave WithRoot out
// to read "/".
func ExampleNew() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	r, err := memory.New(memory.WithMeterProvider(mp), memory.WithRoot("testdata/swap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown(context.Background())

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "system.memory.limit" {
			fmt.Println(m.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
		}
	}
	// Output: system.memory.limit 16384000000
}

// Read the memory directly, without an SDK.
func ExampleReceiver_Snapshot() {
	r, err := memory.New(memory.WithRoot("testdata/swap"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown(context.Background())

	s, err := r.Snapshot()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("used %.1f%% of %d MB, swap %d of %d MiB free\n",
		100*s.Utilization(), s.Total/1e6, s.SwapFree>>20, s.SwapTotal>>20)
	// Output: used 31.2% of 16384 MB, swap 6144 of 8192 MiB free
}
