package hostbench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/host"
	"go.opentelemetry.io/otel/attribute"
	otelmetric "go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/cpu"
	"github.com/ortel-dev/ortel/receivers/memory"
	"github.com/ortel-dev/ortel/receivers/process"
	"github.com/ortel-dev/ortel/semconv"
)

// BenchmarkCollect measures one host collection cycle: everything
// registered on one MeterProvider with a ManualReader, each iteration one
// reader.Collect, in the same invocation for every side:
//
//   - contrib_host: host.Start from contrib/instrumentation/host v0.72.0.
//     Through gopsutil it reads /proc/self/stat (this process's CPU time),
//     /proc/stat (total CPU time), /proc/meminfo and /proc/net/dev, and
//     reports 12 points: process.cpu.time{user,system}, system.cpu.time
//     {user,system,idle,other} for all CPUs together, system.memory.usage
//     and .utilization {used,free}, system.network.io{transmit,receive}.
//   - ortel: the cpu, memory and process receivers with their default
//     metrics. They read /proc/stat, /proc/loadavg, /proc/meminfo,
//     /proc/vmstat and /proc/self/stat, and call getrusage(2) and
//     sched_getaffinity(2), and report 53 points on a 2-CPU machine (46 when
//     a CPU saw no tick between the last two collections):
//     system.cpu.time and .utilization for 7 modes of each logical CPU,
//     logical count, context switches, 3 load averages; memory usage and
//     utilization by 4 states, limit, available, paging faults (2) and
//     operations (4); process CPU time (2) and utilization (2), memory,
//     virtual memory, threads, context switches (2), page faults (2). It
//     reads far more than contrib_host, and no network.
//   - ortel_same: the same receivers limited to the readings contrib_host
//     has: system.cpu.time for all CPUs together (WithPerCPU(false), 7
//     modes), system.memory.usage and .utilization (4 states each),
//     process.cpu.time (2 modes): 17 points from /proc/stat, /proc/meminfo
//     and getrusage(2).
//
// Both ortel sides report "x-cheaper": the median ns/op of contrib_host's
// runs in this invocation divided by theirs. BenchmarkSDKFloor gives the
// part of every side's cost that is the SDK's own.
func BenchmarkCollect(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("compares the Linux /proc readers")
	}
	// contrib_host's ns/op of each run so far: each ortel run is compared
	// with their median (with -count N, Go runs each sub-benchmark N
	// times in a row).
	var contribNs []float64
	ratio := func(b *testing.B, ns float64) {
		if len(contribNs) > 0 {
			b.ReportMetric(median(contribNs)/ns, "x-cheaper")
		}
	}
	run := func(b *testing.B, setup func(*testing.B, *sdkmetric.MeterProvider) error) float64 {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer mp.Shutdown(context.Background())
		if err := setup(b, mp); err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil { // warm up: first reads, attribute sets
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			if err := reader.Collect(ctx, &rm); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		points := 0
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				points += dataPoints(m)
			}
		}
		b.ReportMetric(float64(points), "points/op")
		return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	}
	ortel := func(cpuOpts []cpu.Option, memOpts []memory.Option, procOpts []process.Option) func(*testing.B, *sdkmetric.MeterProvider) error {
		return func(b *testing.B, mp *sdkmetric.MeterProvider) error {
			c, err := cpu.New(append(cpuOpts, cpu.WithMeterProvider(mp), cpu.WithRoot("/"))...)
			if err != nil {
				return err
			}
			m, err := memory.New(append(memOpts, memory.WithMeterProvider(mp), memory.WithRoot("/"))...)
			if err != nil {
				return err
			}
			p, err := process.New(append(procOpts, process.WithMeterProvider(mp), process.WithRoot("/"))...)
			if err != nil {
				return err
			}
			b.Cleanup(func() {
				c.Shutdown(context.Background())
				m.Shutdown(context.Background())
				p.Shutdown(context.Background())
			})
			return nil
		}
	}
	b.Run("contrib_host", func(b *testing.B) {
		contribNs = append(contribNs, run(b, func(_ *testing.B, mp *sdkmetric.MeterProvider) error { return host.Start(host.WithMeterProvider(mp)) }))
	})
	b.Run("ortel", func(b *testing.B) {
		ratio(b, run(b, ortel(nil, nil, nil)))
	})
	sameOpts := ortel(
		[]cpu.Option{cpu.WithPerCPU(false), cpu.WithMetric(semconv.SystemCPUUtilizationName, false), cpu.WithMetric(semconv.SystemCPULogicalCountName, false),
			cpu.WithMetric(semconv.OrtelSystemContextSwitchesName, false), cpu.WithMetric(semconv.OrtelSystemLoadAverageName, false)},
		[]memory.Option{memory.WithMetric(semconv.SystemMemoryLinuxAvailableName, false), memory.WithMetric(semconv.SystemMemoryLimitName, false),
			memory.WithMetric(semconv.SystemPagingUsageName, false), memory.WithMetric(semconv.SystemPagingFaultsName, false),
			memory.WithMetric(semconv.SystemPagingOperationsName, false)},
		[]process.Option{process.WithMetric(semconv.ProcessCPUUtilizationName, false), process.WithMetric(semconv.ProcessMemoryUsageName, false),
			process.WithMetric(semconv.ProcessMemoryVirtualName, false), process.WithMetric(semconv.ProcessThreadCountName, false),
			process.WithMetric(semconv.ProcessContextSwitchesName, false), process.WithMetric(semconv.ProcessPagingFaultsName, false)},
	)
	b.Run("ortel_same", func(b *testing.B) {
		ratio(b, run(b, sameOpts))
	})
	// interleaved: the three sides (and the SDK floors) in turn, in blocks, the median block of
	// each compared. Drift and other processes hit all sides alike, so its
	// ratios are the steadiest on a shared machine.
	b.Run("interleaved", func(b *testing.B) {
		setups := []func(*testing.B, *sdkmetric.MeterProvider) error{
			func(_ *testing.B, mp *sdkmetric.MeterProvider) error { return host.Start(host.WithMeterProvider(mp)) },
			sameOpts,
			ortel(nil, nil, nil),
			floorSetup(12),
			floorSetup(17),
		}
		collects := make([]func(), len(setups))
		for i, setup := range setups {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			b.Cleanup(func() { mp.Shutdown(context.Background()) })
			if err := setup(b, mp); err != nil {
				b.Fatal(err)
			}
			var rm metricdata.ResourceMetrics
			collects[i] = func() {
				if err := reader.Collect(context.Background(), &rm); err != nil {
					b.Fatal(err)
				}
			}
			collects[i]()
		}
		const block = 20
		per := make([][]float64, len(collects))
		rounds := max(b.N/block, 15)
		b.ResetTimer()
		for r := 0; r < rounds; r++ {
			for i, c := range collects {
				t := time.Now()
				for j := 0; j < block; j++ {
					c()
				}
				per[i] = append(per[i], float64(time.Since(t).Nanoseconds())/block)
			}
		}
		contrib, same, all := median(per[0]), median(per[1]), median(per[2])
		floor12, floor17 := median(per[3]), median(per[4])
		b.ReportMetric(contrib, "contrib-ns")
		b.ReportMetric(same, "same-ns")
		b.ReportMetric(all, "ortel-ns")
		b.ReportMetric(contrib/same, "x-cheaper-same")
		b.ReportMetric(contrib/all, "x-cheaper-all")
		// Each side's own work: its collection minus what the SDK alone
		// costs for the same number of points (12 for contrib, 17 here).
		b.ReportMetric((contrib-floor12)/max(same-floor17, 1), "x-cheaper-own")
	})
}

// floorSetup registers the SDK floor of n points (see BenchmarkSDKFloor).
func floorSetup(n int) func(*testing.B, *sdkmetric.MeterProvider) error {
	return func(_ *testing.B, mp *sdkmetric.MeterProvider) error {
		m := mp.Meter("floor")
		c, err := semconv.NewSystemCPUTime(m)
		if err != nil {
			return err
		}
		opts := make([][]otelmetric.ObserveOption, n)
		for i := range opts {
			opts[i] = []otelmetric.ObserveOption{otelmetric.WithAttributeSet(attribute.NewSet(semconv.CPUModeUser, semconv.CPULogicalNumber(i)))}
		}
		_, err = m.RegisterCallback(func(_ context.Context, o otelmetric.Observer) error {
			for i := range opts {
				o.ObserveFloat64(c, float64(i), opts[i]...)
			}
			return nil
		}, c)
		return err
	}
}

// BenchmarkSDKFloor is the cost the SDK alone adds to a collection of n
// points: one callback observing n constant values of a Float64
// observable counter, each with its own prebuilt attribute set, through a
// ManualReader. Subtract it from BenchmarkCollect's figures to see each
// side's own cost (n = 12 for contrib_host, 17 for ortel_same, 53 for
// ortel on a 2-CPU machine).
func BenchmarkSDKFloor(b *testing.B) {
	for _, n := range []int{12, 17, 53} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			defer mp.Shutdown(context.Background())
			if err := floorSetup(n)(b, mp); err != nil {
				b.Fatal(err)
			}
			var rm metricdata.ResourceMetrics
			b.ReportAllocs()
			for b.Loop() {
				if err := reader.Collect(context.Background(), &rm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func dataPoints(m metricdata.Metrics) int {
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		return len(d.DataPoints)
	case metricdata.Sum[float64]:
		return len(d.DataPoints)
	case metricdata.Gauge[int64]:
		return len(d.DataPoints)
	case metricdata.Gauge[float64]:
		return len(d.DataPoints)
	}
	return 0
}
