//go:build linux

package process_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/process"
)

// Watch two processes of a fixture tree and collect once. Leave WithRoot
// out to read "/", and WithPIDs out to watch this process.
func ExampleNew() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	r, err := process.New(process.WithMeterProvider(mp), process.WithRoot("testdata/two"), process.WithPIDs(100, 200))
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
		if m.Name == "process.thread.count" {
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				pid, _ := p.Attributes.Value("process.pid")
				fmt.Println("pid", pid.AsInt64(), "threads", p.Value)
			}
		}
	}
	// Unordered output:
	// pid 100 threads 8
	// pid 200 threads 2
}

// Read a process directly, without an SDK: its CPU time and peak RSS.
func ExampleReceiver_Snapshot() {
	r, err := process.New(process.WithRoot("testdata/two"), process.WithPIDs(100))
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
	p, _ := s.Process(100)
	fmt.Printf("cpu %.1f s, peak RSS %d MiB, %d threads\n", p.UserTime+p.SystemTime, p.PeakRSS>>20, p.Threads)
	// Later: u, ok := later.CPUUtilizationSince(p)

	// Output: cpu 14.0 s, peak RSS 200 MiB, 8 threads
}

// Start with no process and add and remove processes while the receiver
// is registered, as ortel agent --discover does when processes that load
// ONNX Runtime start and exit.
func ExampleReceiver_Watch() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	r, err := process.New(process.WithMeterProvider(mp), process.WithRoot("testdata/two"), process.WithoutSelf())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown(context.Background())

	fmt.Println("watching", r.PIDs())
	if err := r.Watch(100, 200); err != nil {
		fmt.Println(err)
	}
	fmt.Println("watching", r.PIDs())
	r.Unwatch(100)
	fmt.Println("watching", r.PIDs())
	fmt.Println(r.Watch(300))
	// Output:
	// watching []
	// watching [100 200]
	// watching [200]
	// process: cannot watch pid 300: no such process (open "testdata/two/proc/300/stat": no such file or directory)
}
