//go:build linux

package memory

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

const kB = 1024

func TestNewUnsupported(t *testing.T) {
	for _, root := range []string{"testdata/no-meminfo", filepath.Join(t.TempDir(), "nothing")} {
		t.Run(root, func(t *testing.T) {
			mp, reader := procfstest.NewProvider(t)
			r, err := New(WithMeterProvider(mp), WithRoot(root))
			if !errors.Is(err, receivers.ErrUnsupported) || r != nil {
				t.Fatalf("New = %v, %v; want ErrUnsupported", r, err)
			}
			var ue *receivers.UnsupportedError
			if !errors.As(err, &ue) || ue.Source != "memory" || !strings.Contains(err.Error(), "meminfo") {
				t.Errorf("err = %v; want an UnsupportedError from memory naming meminfo", err)
			}
			if got, _ := procfstest.Collect(t, reader); len(got) != 0 {
				t.Errorf("an unsupported receiver registered metrics: %v", got)
			}
		})
	}
	if _, err := New(WithRoot("testdata/swap"), WithMetric("system.cpu.time", true)); err == nil || !strings.Contains(err.Error(), `"system.cpu.time"`) {
		t.Errorf("unknown metric: err = %v", err)
	}
}

// TestCollectSwap reads a machine with swap, every metric on; the values
// are worked out by hand from testdata/swap (kB ×1024).
func TestCollectSwap(t *testing.T) {
	_, collect := newTest(t, WithRoot("testdata/swap"), WithAllMetrics())
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	// MemTotal 16000000, MemFree 4000000, Buffers 500000, Cached 6000000,
	// SReclaimable 500000: cached = 6500000, used = 16000000 - 4000000 -
	// 500000 - 6500000 = 5000000.
	procfstest.AssertMetrics(t, got,
		procfstest.Sum(semconv.SystemMemoryUsageName, false,
			ip(5000000*kB, used), ip(4000000*kB, free), ip(500000*kB, buffers), ip(6500000*kB, cached)),
		procfstest.Sum(semconv.SystemMemoryLimitName, false, ip(16000000*kB)),
		procfstest.Gauge(semconv.SystemMemoryUtilizationName,
			fp(0.3125, used), fp(0.25, free), fp(0.03125, buffers), fp(0.40625, cached)),
		procfstest.Sum(semconv.SystemMemoryLinuxAvailableName, false, ip(9000000*kB)),
		// SwapTotal 8 GiB, SwapFree 6 GiB.
		procfstest.Sum(semconv.SystemPagingUsageName, false, ip(2<<30, swUsed), ip(6<<30, swFree)),
		procfstest.Gauge(semconv.SystemPagingUtilizationName, fp(0.25, swUsed), fp(0.75, swFree)),
		// pgfault 1000000 counts the 2500 major faults too.
		procfstest.Sum(semconv.SystemPagingFaultsName, true, ip(2500, major), ip(997500, minor)),
		procfstest.Sum(semconv.SystemPagingOperationsName, true,
			ip(300, in, major), ip(700, out, major), ip(40000, in, minor), ip(90000, out, minor)),
	)
}

// TestCollectNoSwap reads this machine's copied /proc (no swap): no paging
// usage points at all rather than zeros.
func TestCollectNoSwap(t *testing.T) {
	_, collect := newTest(t, WithRoot("testdata/host"), WithAllMetrics())
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{semconv.SystemPagingUsageName, semconv.SystemPagingUtilizationName} {
		if _, ok := got[name]; ok {
			t.Errorf("%s reported without swap", name)
		}
	}
	for _, name := range []string{semconv.SystemMemoryUsageName, semconv.SystemMemoryLimitName, semconv.SystemPagingFaultsName} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
	// The four states add up to the limit.
	var sum int64
	for _, p := range got[semconv.SystemMemoryUsageName].Data.(metricdata.Sum[int64]).DataPoints {
		sum += p.Value
	}
	limit := got[semconv.SystemMemoryLimitName].Data.(metricdata.Sum[int64]).DataPoints[0].Value
	if sum != limit {
		t.Errorf("usage states add up to %d, limit is %d", sum, limit)
	}
}

func TestDefaultsFollowRegistry(t *testing.T) {
	_, collect := newTest(t, WithRoot("testdata/swap"))
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics() {
		if _, present := got[m.Name]; present != m.DefaultEnabled {
			t.Errorf("%s present = %v, want the registry default %v", m.Name, present, m.DefaultEnabled)
		}
	}
}

func TestBrokenFixtures(t *testing.T) {
	tests := []struct {
		root     string
		want     []metricdata.Metrics
		wantErrs []string
	}{
		{
			root: "testdata/oldkernel", // no MemAvailable, no SReclaimable, no vmstat
			want: []metricdata.Metrics{
				// cached = 6000000 alone; used = 16000000 - 4000000 - 500000 - 6000000.
				procfstest.Sum(semconv.SystemMemoryUsageName, false,
					ip(5500000*kB, used), ip(4000000*kB, free), ip(500000*kB, buffers), ip(6000000*kB, cached)),
				procfstest.Sum(semconv.SystemMemoryLimitName, false, ip(16000000*kB)),
				procfstest.Gauge(semconv.SystemMemoryUtilizationName,
					fp(0.34375, used), fp(0.25, free), fp(0.03125, buffers), fp(0.375, cached)),
				procfstest.Sum(semconv.SystemPagingUsageName, false, ip(2<<30, swUsed), ip(6<<30, swFree)),
				procfstest.Gauge(semconv.SystemPagingUtilizationName, fp(0.25, swUsed), fp(0.75, swFree)),
			},
			wantErrs: []string{"no MemAvailable line", "oldkernel/proc/vmstat"},
		},
		{
			root: "testdata/garbage", // MemTotal 1 kB, MemFree "lots", pgmajfault "many"
			want: []metricdata.Metrics{
				procfstest.Sum(semconv.SystemMemoryLimitName, false, ip(1*kB)),
				procfstest.Sum(semconv.SystemMemoryLinuxAvailableName, false, ip(9000000*kB)),
				procfstest.Sum(semconv.SystemPagingUsageName, false, ip(2<<30, swUsed), ip(6<<30, swFree)),
				procfstest.Gauge(semconv.SystemPagingUtilizationName, fp(0.25, swUsed), fp(0.75, swFree)),
				procfstest.Sum(semconv.SystemPagingOperationsName, true,
					ip(300, in, major), ip(700, out, major), ip(40000, in, minor), ip(90000, out, minor)),
			},
			wantErrs: []string{`"MemFree:         lots kB"`, `"pgmajfault many"`},
		},
		{
			// meminfo cut after MemFree; vmstat cut before pswpin, so it also
			// lacks pgfault and pgmajfault, which come later.
			root: "testdata/truncated",
			want: []metricdata.Metrics{
				procfstest.Sum(semconv.SystemMemoryLimitName, false, ip(16000000*kB)),
				procfstest.Sum(semconv.SystemPagingOperationsName, true, ip(40000, in, minor), ip(90000, out, minor)),
			},
			wantErrs: []string{"want MemTotal, MemFree, Buffers and Cached lines", "want pgfault, pgmajfault, pswpin", "no MemAvailable"},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.root), func(t *testing.T) {
			_, collect := newTest(t, WithRoot(tt.root), WithAllMetrics())
			got, err := collect()
			if err == nil {
				t.Fatal("first collection reported no error")
			}
			for _, s := range tt.wantErrs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q\n lacks %q", err, s)
				}
			}
			procfstest.AssertMetrics(t, got, tt.want...)
			if _, err := collect(); err != nil {
				t.Errorf("second collection reported again: %v", err)
			}
		})
	}
}

func TestUsageClampsUsed(t *testing.T) {
	var s sample
	s.setMem(memTotal, 100)
	s.setMem(memFree, 60)
	s.setMem(memBuffers, 30)
	s.setMem(memCached, 20) // more than the total altogether: used is 0, not a wrapped uint64
	if u := s.usage(); !u.ok || u.used != 0 {
		t.Errorf("usage = %+v, want used 0", u)
	}
}

func TestSwapAppearsAndGoes(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/host")
	_, collect := newTest(t, WithRoot(root))
	if got, _ := collect(); got[semconv.SystemPagingUsageName].Name != "" {
		t.Fatal("paging usage without swap")
	}
	procfstest.Rewrite(t, root, "proc/meminfo", "testdata/swap")
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertMetrics(t, map[string]metricdata.Metrics{semconv.SystemPagingUsageName: got[semconv.SystemPagingUsageName]},
		procfstest.Sum(semconv.SystemPagingUsageName, false, ip(2<<30, swUsed), ip(6<<30, swFree)))
}

func TestShutdown(t *testing.T) {
	r, collect := newTest(t, WithRoot("testdata/swap"))
	if got, _ := collect(); len(got) == 0 {
		t.Fatal("no metrics before Shutdown")
	}
	procfstest.ShutdownTwice(t, r.Shutdown, collect)
	if _, err := r.Snapshot(); err == nil {
		t.Error("Snapshot after Shutdown succeeded")
	}
}

// TestShutdownUnregisters: after Shutdown the SDK no longer runs the
// receiver's callback (a Shutdown that only marks the receiver down
// leaks the registration; its metrics would vanish all the same).
func TestShutdownUnregisters(t *testing.T) {
	procfstest.ShutdownUnregisters(t, func(mp metric.MeterProvider) (*Receiver, error) {
		return New(WithRoot("testdata/swap"), WithMeterProvider(mp))
	})
}

// TestShutdownDuringCollect: Shutdown while collections run must not
// deadlock (the SDK holds its lock while the callback runs).
func TestShutdownDuringCollect(t *testing.T) {
	procfstest.ShutdownDuringCollect(t, func(t *testing.T, mp metric.MeterProvider) func(context.Context) error {
		r, err := New(WithRoot("testdata/swap"), WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		return r.Shutdown
	})
}

func TestReceiverConcurrentSafe(t *testing.T) {
	r, collect := newTest(t, WithRoot("/"), WithAllMetrics())
	procfstest.Concurrent{
		Rounds:  20,
		Collect: func() error { _, err := collect(); return err },
		Snapshot: func() error {
			if _, err := r.Snapshot(); err != errShutdown {
				return err
			}
			return nil
		},
		Shutdown: func() { r.Shutdown(t.Context()) },
	}.Run(t)
}

// TestRealProc reads this machine's /proc/meminfo and compares with a
// plain parse of it.
func TestRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	r, collect := newTest(t, WithRoot("/"))
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "MemTotal:" {
			for _, c := range f[1] {
				total = total*10 + int64(c-'0')
			}
		}
	}
	limit := got[semconv.SystemMemoryLimitName].Data.(metricdata.Sum[int64]).DataPoints
	if len(limit) != 1 || limit[0].Value != total*kB {
		t.Errorf("limit = %+v, want %d", limit, total*kB)
	}
	if _, ok := got[semconv.SystemMemoryLinuxAvailableName]; !ok {
		t.Error("no MemAvailable on this kernel?")
	}
	s, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if s.Total != uint64(total*kB) || s.Used+s.Free+s.Buffers+s.Cached != s.Total || s.Utilization() <= 0 || s.Utilization() >= 1 {
		t.Errorf("Snapshot = %+v, utilization %v", s, s.Utilization())
	}
}

func TestHostRootFromEnvironment(t *testing.T) {
	abs, err := filepath.Abs("testdata/swap")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(procfs.EnvHostRoot, abs)
	_, collect := newTest(t)
	got, _ := collect()
	procfstest.AssertMetrics(t, map[string]metricdata.Metrics{semconv.SystemMemoryLimitName: got[semconv.SystemMemoryLimitName]},
		procfstest.Sum(semconv.SystemMemoryLimitName, false, ip(16000000*kB)))
}

func TestCollectDoesNotAllocate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the allocation-free path is the Linux /proc reader")
	}
	r, err := New(WithRoot("/"), WithAllMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(t.Context())
	var o procfstest.Observer
	r.collect(t.Context(), &o)
	if n := testing.AllocsPerRun(50, func() { r.collect(t.Context(), &o) }); n != 0 {
		t.Errorf("a collection allocates %v times, want 0", n)
	}
	if o.N == 0 {
		t.Error("nothing observed")
	}
}
