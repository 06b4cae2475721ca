//go:build linux

package cpu_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/cpu"
)

// Register the receiver on a MeterProvider and collect once. The root here
// is a fixture tree of a 4-CPU machine; leave WithRoot out to read "/".
func ExampleNew() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	r, err := cpu.New(cpu.WithMeterProvider(mp), cpu.WithRoot("testdata/xeon4"))
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
		if m.Name == "system.cpu.logical.count" {
			fmt.Println(m.Name, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
		}
	}
	// Output: system.cpu.logical.count 4
}

// Read the CPUs directly, without an SDK: the busy fraction of all CPUs
// between two snapshots.
func ExampleReceiver_Snapshot() {
	r, err := cpu.New(cpu.WithRoot("testdata/xeon4"))
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
	fmt.Printf("%d CPUs, user %.0f s, idle %.0f s, load %.2f\n", s.LogicalCPUs, s.Total.User, s.Total.Idle, s.Load[0])
	// Later: u, ok := later.UtilizationSince(s)

	// Output: 4 CPUs, user 380 s, idle 1640 s, load 1.25
}
