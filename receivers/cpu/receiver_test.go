//go:build linux

package cpu

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

func TestNewUnsupported(t *testing.T) {
	for _, root := range []string{"testdata/no-stat", filepath.Join(t.TempDir(), "nothing")} {
		t.Run(root, func(t *testing.T) {
			mp, reader := procfstest.NewProvider(t)
			r, err := New(WithMeterProvider(mp), WithRoot(root))
			if !errors.Is(err, receivers.ErrUnsupported) || r != nil {
				t.Fatalf("New = %v, %v; want ErrUnsupported", r, err)
			}
			var ue *receivers.UnsupportedError
			if !errors.As(err, &ue) || ue.Source != "cpu" || !strings.Contains(err.Error(), filepath.Join(root, "proc", "stat")) {
				t.Errorf("err = %v; want an UnsupportedError from cpu naming /proc/stat", err)
			}
			if got, _ := procfstest.Collect(t, reader); len(got) != 0 {
				t.Errorf("an unsupported receiver registered metrics: %v", got)
			}
		})
	}
}

func TestNewUnknownMetric(t *testing.T) {
	_, err := New(WithRoot("testdata/xeon4"), WithMetric("system.memory.usage", true))
	if err == nil || !strings.Contains(err.Error(), `"system.memory.usage"`) {
		t.Fatalf("err = %v, want one naming the unknown metric", err)
	}
}

// TestCollectXeon4 follows a 4-CPU machine with cpufreq through two
// collections, with every metric on: times, frequencies, counters and load
// first; utilization only from the second, computed from the deltas.
func TestCollectXeon4(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/xeon4")
	_, collect := newTest(t, WithRoot(root), WithAllMetrics())

	got, err := collect()
	if err != nil {
		t.Fatalf("first collection: %v", err)
	}
	procfstest.AssertMetrics(t, got,
		timeMetric(
			cpuTimes(0, 10000, 100, 3000, 40000, 200, 25, 75, 10),
			cpuTimes(1, 9000, 50, 2500, 42000, 150, 20, 60, 5),
			cpuTimes(2, 11000, 0, 3500, 39000, 300, 30, 90, 20),
			cpuTimes(3, 8000, 10, 2000, 43000, 100, 10, 40, 8),
		),
		// No system.cpu.utilization: there is no interval yet.
		freqMetric(2.4e9, 2.1e9, 3e9, 0.8e9), // cpufreq, not the 2000 MHz of /proc/cpuinfo
		countMetric(4),
		ctxtMetric(987654321),
		intrMetric(123456789),
		loadMetric(1.25, 0.80, 0.50),
	)

	procfstest.Rewrite(t, root, "proc/stat", "testdata/xeon4-later")
	procfstest.Rewrite(t, root, "proc/loadavg", "testdata/xeon4-later")
	got, err = collect()
	if err != nil {
		t.Fatalf("second collection: %v", err)
	}
	procfstest.AssertMetrics(t, got,
		timeMetric(
			cpuTimes(0, 10100, 100, 3040, 40050, 204, 27, 77, 12),
			cpuTimes(1, 9000, 50, 2500, 42200, 150, 20, 60, 5),
			cpuTimes(2, 11000, 0, 3500, 39000, 300, 30, 90, 20),
			cpuTimes(3, 8050, 10, 2000, 43050, 95, 10, 40, 8),
		),
		utilMetric(
			// cpu0: 200 ticks passed: user +100, system +40, idle +50,
			// iowait +4, irq+softirq +4, steal +2.
			cpuShares(0, map[string]float64{"user": 0.5, "nice": 0, "system": 0.2, "idle": 0.25, "iowait": 0.02, "interrupt": 0.02, "steal": 0.01}),
			// cpu1: idle the whole 200 ticks.
			cpuShares(1, map[string]float64{"user": 0, "nice": 0, "system": 0, "idle": 1, "iowait": 0, "interrupt": 0, "steal": 0}),
			// cpu2: no tick passed, so no point rather than a made-up one.
			// cpu3: user +50, idle +50; iowait went back by 5 and counts 0.
			cpuShares(3, map[string]float64{"user": 0.5, "nice": 0, "system": 0, "idle": 0.5, "iowait": 0, "interrupt": 0, "steal": 0}),
		),
		freqMetric(2.4e9, 2.1e9, 3e9, 0.8e9),
		countMetric(4),
		ctxtMetric(987660000),
		intrMetric(123460000),
		loadMetric(2.50, 1.00, 0.75),
	)

	// cpu2 catches up against its older baseline: 100 ticks, all user.
	procfstest.WriteFile(t, root, "proc/stat", strings.Replace(readFile(t, "testdata/xeon4-later/proc/stat"),
		"cpu2 11000 0", "cpu2 11100 0", 1))
	got, _ = collect()
	util := got[semconv.SystemCPUUtilizationName].Data.(metricdata.Gauge[float64])
	var cpu2User float64 = -1
	for _, p := range util.DataPoints {
		n, _ := p.Attributes.Value(semconv.CPULogicalNumberKey)
		m, _ := p.Attributes.Value(semconv.CPUModeKey)
		if n.AsInt64() == 2 && m.AsString() == "user" {
			cpu2User = p.Value
		}
	}
	if cpu2User != 1 {
		t.Errorf("cpu2 user utilization after 100 user ticks = %v, want 1", cpu2User)
	}
}

func TestDefaultsFollowRegistry(t *testing.T) {
	_, collect := newTest(t, WithRoot("testdata/xeon4"))
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics() {
		_, present := got[m.Name]
		// Utilization needs a second collection.
		if m.Name == semconv.SystemCPUUtilizationName {
			continue
		}
		if present != m.DefaultEnabled {
			t.Errorf("%s present = %v, want the registry default %v", m.Name, present, m.DefaultEnabled)
		}
	}
	_, collect = newTest(t, WithRoot("testdata/xeon4"), WithMetric(semconv.SystemCPUTimeName, false), WithMetric(semconv.OrtelSystemInterruptsName, true))
	got, _ = collect()
	if _, ok := got[semconv.SystemCPUTimeName]; ok {
		t.Error("system.cpu.time turned off but reported")
	}
	if _, ok := got[semconv.OrtelSystemInterruptsName]; !ok {
		t.Error("ortel.system.interrupts turned on but not reported")
	}
}

func TestFrequencyFromCPUInfo(t *testing.T) {
	// testdata/host has no /sys: the "cpu MHz" lines are the source.
	_, collect := newTest(t, WithRoot("testdata/host"), WithMetric(semconv.SystemCPUFrequencyName, true))
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertMetrics(t, map[string]metricdata.Metrics{semconv.SystemCPUFrequencyName: got[semconv.SystemCPUFrequencyName]},
		freqMetric(2e9, 2e9))
}

// TestBrokenFixtures checks that a reading that fails is left out, says why
// (naming the file) on the first collection only, and that the others are
// still reported.
func TestBrokenFixtures(t *testing.T) {
	tests := []struct {
		root     string
		want     []metricdata.Metrics
		wantErrs []string // substrings of the first collection's error
	}{
		{
			root: "testdata/garbage",
			want: []metricdata.Metrics{
				timeMetric(cpuTimes(0, 10000, 0, 1000, 20000, 50, 0, 25, 3)), // cpu1 is garbage
				countMetric(2),
			},
			wantErrs: []string{`"cpu1 10000 x 1000`, `the "ctxt" line holds no number`, `the "intr" line holds no number`, `garbage/proc/loadavg`, `"cpu MHz\t\t: fast"`},
		},
		{
			root: "testdata/truncated",
			want: []metricdata.Metrics{
				timeMetric(cpuTimes(1, 10000, 0, 1000, 20000, 50, 0, 25, 2)), // cpu0 has 3 numbers
				countMetric(2),
			},
			wantErrs: []string{`"cpu0 10000 0 1000"`, `no "ctxt" line`, `no "intr" line`, `truncated/proc/loadavg`, `no "cpu MHz" lines`},
		},
		{
			root: "testdata/oldkernel",
			want: []metricdata.Metrics{
				timeMetric(cpuTimes(0, 100, 0, 50, 1000)), // four columns: four modes, no made-up zeros
				countMetric(1),
				ctxtMetric(43),
				intrMetric(42),
				freqMetric(),
			},
			wantErrs: []string{"oldkernel/proc/loadavg"},
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
			want := tt.want
			if filepath.Base(tt.root) == "oldkernel" {
				want = want[:len(want)-1] // no cpuinfo and no cpufreq: no frequency
				if !strings.Contains(err.Error(), "system.cpu.frequency") {
					t.Errorf("error %q does not say why there is no frequency", err)
				}
			}
			procfstest.AssertMetrics(t, got, want...)
			// The same failures are not reported again.
			got2, err := collect()
			if err != nil {
				t.Errorf("second collection reported again: %v", err)
			}
			if len(got2) != len(got) {
				t.Errorf("second collection: %d metrics, first %d", len(got2), len(got))
			}
		})
	}
}

func TestFailureReportedAgainAfterRecovery(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/xeon4")
	_, collect := newTest(t, WithRoot(root))
	if _, err := collect(); err != nil {
		t.Fatal(err)
	}
	procfstest.WriteFile(t, root, "proc/loadavg", "garbage\n")
	if _, err := collect(); err == nil || !strings.Contains(err.Error(), "loadavg") {
		t.Fatalf("broken loadavg: err = %v", err)
	}
	if _, err := collect(); err != nil {
		t.Fatalf("still broken: reported again: %v", err)
	}
	procfstest.Rewrite(t, root, "proc/loadavg", "testdata/xeon4")
	got, err := collect()
	if err != nil {
		t.Fatalf("fixed: %v", err)
	}
	if _, ok := got[semconv.OrtelSystemLoadAverageName]; !ok {
		t.Fatal("fixed loadavg not reported")
	}
	procfstest.WriteFile(t, root, "proc/loadavg", "garbage\n")
	if _, err := collect(); err == nil {
		t.Fatal("broken again: not reported")
	}
}

func TestShutdown(t *testing.T) {
	r, collect := newTest(t, WithRoot("testdata/xeon4"))
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
		return New(WithRoot("testdata/xeon4"), WithMeterProvider(mp))
	})
}

// TestShutdownDuringCollect: Shutdown while collections run must not
// deadlock (the SDK holds its lock while the callback runs).
func TestShutdownDuringCollect(t *testing.T) {
	procfstest.ShutdownDuringCollect(t, func(t *testing.T, mp metric.MeterProvider) func(context.Context) error {
		r, err := New(WithRoot("testdata/xeon4"), WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		return r.Shutdown
	})
}

func TestReceiverConcurrentSafe(t *testing.T) {
	r, collect := newTest(t, WithRoot("/"), WithAllMetrics())
	procfstest.Concurrent{
		Rounds: 20,
		Collect: func() error {
			if _, err := collect(); err != nil && !strings.Contains(err.Error(), "frequency") {
				return err
			}
			return nil
		},
		Snapshot: func() error {
			if _, err := r.Snapshot(); err != errShutdown {
				return err
			}
			return nil
		},
		Shutdown: func() { r.Shutdown(t.Context()) },
	}.Run(t)
}

// TestRealProc reads this machine's /proc.
func TestRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	online := 0
	for _, line := range bytes.Split(stat, []byte("\n")) {
		if len(line) > 3 && bytes.HasPrefix(line, []byte("cpu")) && line[3] != ' ' {
			online++
		}
	}
	r, collect := newTest(t, WithRoot("/"))
	first, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	count := first[semconv.SystemCPULogicalCountName].Data.(metricdata.Sum[int64]).DataPoints
	if len(count) != 1 || count[0].Value != int64(online) {
		t.Errorf("logical count = %+v, want %d (cpuN lines of /proc/stat)", count, online)
	}
	if pts := first[semconv.SystemCPUTimeName].Data.(metricdata.Sum[float64]).DataPoints; len(pts) != 7*online {
		t.Errorf("system.cpu.time has %d points, want 7 modes × %d CPUs", len(pts), online)
	}
	if _, ok := first[semconv.OrtelSystemLoadAverageName]; !ok {
		t.Error("no load average")
	}
	// Work until the kernel's tick counters move, however long that
	// takes on a loaded machine, then collect again.
	start, _ := r.Snapshot()
	for {
		s, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.UtilizationSince(start); ok && s.Total.Total()-start.Total.Total() >= 0.05*float64(online) {
			break
		}
	}
	second, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	util, ok := second[semconv.SystemCPUUtilizationName]
	if !ok {
		t.Fatal("no utilization on the second collection")
	}
	sums := map[int64]float64{}
	for _, p := range util.Data.(metricdata.Gauge[float64]).DataPoints {
		if p.Value < 0 || p.Value > 1 {
			t.Errorf("utilization %v out of [0, 1]: %v", p.Value, p.Attributes)
		}
		n, _ := p.Attributes.Value(semconv.CPULogicalNumberKey)
		sums[n.AsInt64()] += p.Value
	}
	for n, s := range sums {
		if s < 0.999 || s > 1.001 {
			t.Errorf("cpu%d: modes add up to %v, want 1", n, s)
		}
	}
}

func TestHostRootFromEnvironment(t *testing.T) {
	abs, err := filepath.Abs("testdata/xeon4")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(procfs.EnvHostRoot, abs)
	_, collect := newTest(t)
	got, _ := collect()
	procfstest.AssertMetrics(t, map[string]metricdata.Metrics{semconv.SystemCPULogicalCountName: got[semconv.SystemCPULogicalCountName]}, countMetric(4))

	// A bad value is reported once through otel.Handle and "/" is read.
	var handled []error
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { handled = append(handled, err) }))
	t.Cleanup(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	t.Setenv(procfs.EnvHostRoot, "relative/path")
	if _, err := New(); err != nil && runtime.GOOS == "linux" {
		t.Fatalf("a bad %s made New fail: %v", procfs.EnvHostRoot, err)
	}
	if len(handled) != 1 || !strings.Contains(handled[0].Error(), procfs.EnvHostRoot) {
		t.Errorf("handled errors = %v, want one naming %s", handled, procfs.EnvHostRoot)
	}
}

func TestCollectDoesNotAllocate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the allocation-free path is the Linux /proc reader")
	}
	_, collect := newTest(t, WithRoot("/"), WithAllMetrics())
	collect()
	r, err := New(WithRoot("/"), WithAllMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(t.Context())
	var o procfstest.Observer
	r.collect(t.Context(), &o) // warm up
	r.collect(t.Context(), &o)
	allocs := testing.AllocsPerRun(50, func() { r.collect(t.Context(), &o) })
	if allocs != 0 {
		t.Errorf("a collection allocates %v times, want 0", allocs)
	}
	if o.N == 0 {
		t.Error("nothing observed")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAllCPUsTogether: WithPerCPU(false) reports the "cpu" line of
// /proc/stat, without cpu.logical_number.
func TestAllCPUsTogether(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/xeon4")
	_, collect := newTest(t, WithRoot(root), WithPerCPU(false))
	modes := func(vals ...float64) []metricdata.DataPoint[float64] {
		var pts []metricdata.DataPoint[float64]
		for m, v := range vals {
			pts = append(pts, metricdata.DataPoint[float64]{Attributes: attribute.NewSet(semconv.CPUModeKey.String(modeNames[m])), Value: v})
		}
		return pts
	}
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	// cpu  38000 160 11000 164000 750 85 265 43
	procfstest.AssertMetrics(t, got,
		timeMetric(modes(380, 1.6, 110, 1640, 7.5, 3.5, 0.43)),
		countMetric(4), ctxtMetric(987654321), loadMetric(1.25, 0.80, 0.50))

	procfstest.Rewrite(t, root, "proc/stat", "testdata/xeon4-later")
	got, err = collect()
	if err != nil {
		t.Fatal(err)
	}
	// cpu  38150 160 11040 164300 749 87 267 45: 496 ticks passed (iowait
	// went back by 1 and counts 0).
	procfstest.AssertMetrics(t, got,
		timeMetric(modes(381.5, 1.6, 110.4, 1643, 7.49, 3.54, 0.45)),
		utilMetric(modes(150.0/496, 0, 40.0/496, 300.0/496, 0, 4.0/496, 2.0/496)),
		countMetric(4), ctxtMetric(987660000), loadMetric(1.25, 0.80, 0.50))
}
