//go:build linux

package process

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

func TestNewErrors(t *testing.T) {
	t.Run("no /proc", func(t *testing.T) {
		mp, reader := procfstest.NewProvider(t)
		r, err := New(WithMeterProvider(mp), WithRoot(t.TempDir()))
		if !errors.Is(err, receivers.ErrUnsupported) || r != nil {
			t.Fatalf("New = %v, %v; want ErrUnsupported", r, err)
		}
		var ue *receivers.UnsupportedError
		if !errors.As(err, &ue) || ue.Source != "process" {
			t.Errorf("err = %v, want an UnsupportedError from process", err)
		}
		if got, _ := procfstest.Collect(t, reader); len(got) != 0 {
			t.Errorf("registered metrics: %v", got)
		}
	})
	tests := []struct {
		name string
		pids []int
		want string
	}{
		{"missing pid", []int{100, 999}, "cannot watch pid 999: no such process"},
		{"zero pid", []int{0}, "cannot watch pid 0: not a process id"},
		{"negative pid", []int{-5}, "cannot watch pid -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := New(WithRoot("testdata/two"), WithPIDs(tt.pids...))
			if err == nil || r != nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, %v; want an error saying %q", r, err, tt.want)
			}
			if errors.Is(err, receivers.ErrUnsupported) {
				t.Error("a bad PID is not an unsupported source")
			}
		})
	}
	if _, err := New(WithRoot("testdata/two"), WithPIDs(100), WithMetric("process.cpu.tim", true)); err == nil || !strings.Contains(err.Error(), `"process.cpu.tim"`) {
		t.Errorf("unknown metric: err = %v", err)
	}
}

// TestCollectTwo watches two processes of a fixture through two
// collections two seconds apart, every metric on; the values are worked
// out by hand from testdata/two and testdata/two-later.
func TestCollectTwo(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/two")
	now, advance := fakeClock()
	r, collect := newTest(t, WithRoot(root), WithPIDs(100, 200, 100), WithAllMetrics(), withClock(now))
	if got := r.PIDs(); len(got) != 2 || got[0] != 100 || got[1] != 200 {
		t.Errorf("PIDs = %v, want [100 200]", got)
	}
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	common := func(rss100 int64, threads100 int64, vsize100 int64, minflt100, majflt100, vol100, invol100, minflt200 int64) []metricdata.Metrics {
		return []metricdata.Metrics{
			procfstest.Sum(semconv.ProcessMemoryUsageName, false, ip(rss100*pageSize, 100), ip(1000*pageSize, 200)),
			procfstest.Sum(semconv.ProcessMemoryVirtualName, false, ip(vsize100, 100), ip(50000000, 200)),
			procfstest.Sum(semconv.ProcessThreadCountName, false, ip(threads100, 100), ip(2, 200)),
			procfstest.Sum(semconv.ProcessContextSwitchesName, true, ip(vol100, 100, vol), ip(invol100, 100, invol), ip(10, 200, vol), ip(2, 200, invol)),
			procfstest.Sum(semconv.ProcessPagingFaultsName, true, ip(majflt100, 100, major), ip(minflt100, 100, minor), ip(1, 200, major), ip(minflt200, 200, minor)),
			procfstest.Sum(semconv.ProcessUnixFileDescriptorCountName, false, ip(5, 100), ip(3, 200)),
			procfstest.Sum(semconv.ProcessDiskIOName, true, ip(4096000, 100, ioRead), ip(8192, 100, ioWrite), ip(0, 200, ioRead), ip(0, 200, ioWrite)),
		}
	}
	// utime/stime in USER_HZ (100) ticks: 1000/400 and 500/100.
	procfstest.AssertMetrics(t, got, append(common(25600, 8, 1073741824, 5000, 7, 250, 30, 300),
		procfstest.Sum(semconv.ProcessCPUTimeName, true, fp(10, 100, user), fp(4, 100, system), fp(5, 200, user), fp(1, 200, system)),
		// No process.cpu.utilization before there is an interval.
	)...)

	procfstest.Rewrite(t, root, "proc/100/stat", "testdata/two-later")
	procfstest.Rewrite(t, root, "proc/100/status", "testdata/two-later")
	procfstest.Rewrite(t, root, "proc/200/stat", "testdata/two-later")
	advance(2 * time.Second)
	got, err = collect()
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertMetrics(t, got, append(common(26000, 9, 1073741824+4096, 5100, 9, 260, 31, 310),
		procfstest.Sum(semconv.ProcessCPUTimeName, true, fp(11.5, 100, user), fp(4.5, 100, system), fp(6, 200, user), fp(1, 200, system)),
		procfstest.Gauge(semconv.ProcessCPUUtilizationName,
			// pid 100 may run on CPUs 0-3: +1.5 s user, +0.5 s system over 2 s × 4.
			fp(0.1875, 100, user), fp(0.0625, 100, system),
			// pid 200 may run on CPU 0 only: +1 s user over 2 s × 1.
			fp(0.5, 200, user), fp(0, 200, system)),
	)...)
}

func TestDefaultPIDIsSelf(t *testing.T) {
	// testdata/host/proc/self links to 4242: a copy of a real shell.
	r, collect := newTest(t, WithRoot(procfstest.CopyTree(t, "testdata/host")))
	if got := r.PIDs(); len(got) != 1 || got[0] != 4242 {
		t.Fatalf("PIDs = %v, want [4242]", got)
	}
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Metrics() {
		if m.Name == semconv.ProcessCPUUtilizationName {
			continue // needs a second collection
		}
		_, present := got[m.Name]
		if present != m.DefaultEnabled {
			t.Errorf("%s present = %v, want the registry default %v", m.Name, present, m.DefaultEnabled)
		}
		if present && !pidsOf(got[m.Name])[4242] {
			t.Errorf("%s has no point for pid 4242", m.Name)
		}
	}
}

func TestBrokenProcesses(t *testing.T) {
	_, collect := newTest(t, WithRoot("testdata/broken"), WithPIDs(300, 301, 302), WithAllMetrics())
	got, err := collect()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`300/stat": malformed content "300 (garbage) S 1 x y z`,
		`300/status": malformed line "voluntary_ctxt_switches:\tlots"`,
		`300/io": want read_bytes and write_bytes`,
		`301/stat": malformed content`,
		`301/status": no voluntary_ctxt_switches`,
		`301/io": want read_bytes and write_bytes`,
		`302/status"`, `302/io"`, `302/fd"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the missing files of 302 are not ErrNotExist: %v", err)
	}
	// Only what could be read: 302's stat, and the fd counts of 300 and 301.
	procfstest.AssertMetrics(t, got,
		procfstest.Sum(semconv.ProcessCPUTimeName, true, fp(0.7, 302, user), fp(0.3, 302, system)),
		// Nothing ran since New took the baseline: 0, not absent.
		procfstest.Gauge(semconv.ProcessCPUUtilizationName, fp(0, 302, user), fp(0, 302, system)),
		procfstest.Sum(semconv.ProcessMemoryUsageName, false, ip(100*pageSize, 302)),
		procfstest.Sum(semconv.ProcessMemoryVirtualName, false, ip(1000000, 302)),
		procfstest.Sum(semconv.ProcessThreadCountName, false, ip(1, 302)),
		procfstest.Sum(semconv.ProcessPagingFaultsName, true, ip(0, 302, major), ip(40, 302, minor)),
		procfstest.Sum(semconv.ProcessUnixFileDescriptorCountName, false, ip(1, 300), ip(2, 301)),
	)
	if _, err := collect(); err != nil {
		t.Errorf("second collection reported again: %v", err)
	}
}

// TestPermissionDenied: /proc/PID/io of another user's process is refused
// (EACCES). Tests run as root, so the refusal is injected through the
// opener.
func TestPermissionDenied(t *testing.T) {
	denyIO := func(path string) (int, error) {
		if filepath.Base(path) == "io" {
			return -1, syscall.EACCES
		}
		return procfs.Open(path)
	}
	_, collect := newTest(t, WithRoot("testdata/two"), WithPIDs(100), WithMetric(semconv.ProcessDiskIOName, true), withOpener(denyIO))
	got, err := collect()
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "proc/100/io") {
		t.Fatalf("err = %v, want permission denied naming proc/100/io", err)
	}
	if _, ok := got[semconv.ProcessDiskIOName]; ok {
		t.Error("process.disk.io reported without permission")
	}
	if _, ok := got[semconv.ProcessMemoryUsageName]; !ok {
		t.Error("the other readings are gone too")
	}
	if _, err := collect(); err != nil {
		t.Errorf("reported again: %v", err)
	}
}

// TestProcessExits watches a real child process that exits: its points
// disappear, the exit is reported once, and this process is still read.
func TestProcessExits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("cannot start sleep:", err)
	}
	child := cmd.Process.Pid
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	self := os.Getpid()
	r, collect := newTest(t, WithPIDs(self, child))
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	if p := pidsOf(got[semconv.ProcessMemoryUsageName]); !p[int64(self)] || !p[int64(child)] {
		t.Fatalf("pids before exit = %v", p)
	}
	cmd.Process.Kill()
	cmd.Wait() // reaped: /proc/PID is gone
	got, err = collect()
	if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "pid "+strconv.Itoa(child)) {
		t.Fatalf("err = %v, want the exit of pid %d", err, child)
	}
	for name, m := range got {
		if p := pidsOf(m); p[int64(child)] || !p[int64(self)] {
			t.Errorf("%s after exit: pids %v", name, p)
		}
	}
	if _, err := collect(); err != nil {
		t.Errorf("exit reported again: %v", err)
	}
	if got := r.PIDs(); len(got) != 1 || got[0] != self {
		t.Errorf("PIDs = %v, want [%d]", got, self)
	}
	s, err := r.Snapshot()
	if err != nil || len(s.Processes) != 1 {
		t.Errorf("Snapshot = %+v, %v", s, err)
	}
}

func TestShutdown(t *testing.T) {
	r, collect := newTest(t, WithRoot("testdata/two"), WithPIDs(100, 200))
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
		return New(WithRoot("testdata/two"), WithPIDs(100, 200), WithMeterProvider(mp))
	})
}

// TestShutdownDuringCollect: Shutdown while collections run must not
// deadlock (the SDK holds its lock while the callback runs).
func TestShutdownDuringCollect(t *testing.T) {
	procfstest.ShutdownDuringCollect(t, func(t *testing.T, mp metric.MeterProvider) func(context.Context) error {
		r, err := New(WithRoot("testdata/two"), WithPIDs(100, 200), WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		return r.Shutdown
	})
}

func TestReceiverConcurrentSafe(t *testing.T) {
	r, collect := newTest(t, WithAllMetrics())
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

// TestRealProc reads this process through the machine's /proc.
func TestRealProc(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc")
	}
	r, collect := newTest(t, WithAllMetrics())
	if got := r.PIDs(); len(got) != 1 || got[0] != os.Getpid() {
		t.Fatalf("PIDs = %v, want this process %d", got, os.Getpid())
	}
	first, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	value := func(got map[string]metricdata.Metrics, name string) int64 {
		pts := got[name].Data.(metricdata.Sum[int64]).DataPoints
		if len(pts) != 1 {
			t.Fatalf("%s: %d points", name, len(pts))
		}
		return pts[0].Value
	}
	if rss := value(first, semconv.ProcessMemoryUsageName); rss < 1<<20 || rss > value(first, semconv.ProcessMemoryVirtualName) {
		t.Errorf("rss = %d", rss)
	}
	if n := value(first, semconv.ProcessThreadCountName); n < 2 {
		t.Errorf("threads = %d; a Go test has several", n)
	}
	entries, _ := os.ReadDir("/proc/self/fd")
	if n := value(first, semconv.ProcessUnixFileDescriptorCountName); n < 3 || n > int64(len(entries))+2 {
		t.Errorf("fds = %d, ReadDir sees %d", n, len(entries))
	}
	// Work until the kernel has counted CPU time for it, however long
	// that takes on a loaded machine, then utilization is in (0, 1].
	s0, _ := r.Snapshot()
	p0, _ := s0.Process(os.Getpid())
	for {
		s, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := s.Process(os.Getpid()); p.UserTime+p.SystemTime >= p0.UserTime+p0.SystemTime+0.05 {
			break
		}
	}
	second, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, p := range second[semconv.ProcessCPUUtilizationName].Data.(metricdata.Gauge[float64]).DataPoints {
		if p.Value < 0 || p.Value > 1 {
			t.Errorf("utilization %v out of [0, 1]", p.Value)
		}
		total += p.Value
	}
	if total <= 0 {
		t.Errorf("utilization after 50 ms of CPU time = %v", total)
	}
	s1, _ := r.Snapshot()
	p1, ok := s1.Process(os.Getpid())
	if u, okU := p1.CPUUtilizationSince(p0); !ok || !okU || u <= 0 || p1.PeakRSS < p1.RSS || p1.CPUs < 1 {
		t.Errorf("Snapshot: %+v, utilization %v %v", p1, u, okU)
	}
}

func TestHostRootFromEnvironment(t *testing.T) {
	abs, err := filepath.Abs(procfstest.CopyTree(t, "testdata/host"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(procfs.EnvHostRoot, abs)
	r, _ := newTest(t)
	if got := r.PIDs(); len(got) != 1 || got[0] != 4242 {
		t.Errorf("PIDs = %v, want [4242] from the fixture's proc/self", got)
	}
}

func TestCollectDoesNotAllocate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the allocation-free path is the Linux /proc reader")
	}
	r, err := New(WithAllMetrics())
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

// TestPeakRSSNotBelowRSS: the peak comes from /proc/PID/status (or
// getrusage) and the current RSS from /proc/PID/stat, read one after the
// other; memory that grew between the reads must not show a peak below
// what is resident. The fixture's status is given a peak of 1000 kB,
// below its stat's 548 pages.
func TestPeakRSSNotBelowRSS(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/host")
	status, err := os.ReadFile(filepath.Join(root, "proc/4242/status"))
	if err != nil {
		t.Fatal(err)
	}
	procfstest.WriteFile(t, root, "proc/4242/status", strings.Replace(string(status), "VmHWM:\t    2376 kB", "VmHWM:\t    1000 kB", 1))
	r, _ := newTest(t, WithRoot(root), WithAllMetrics())
	s, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := s.Process(4242)
	if !ok || p.RSS <= 1000<<10 || p.PeakRSS != p.RSS {
		t.Errorf("Snapshot: %+v; want an RSS above 1000 KiB and the peak raised to it", p)
	}
}
