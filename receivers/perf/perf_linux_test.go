package perf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"golang.org/x/sys/unix"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

func withOpener(open eventOpener) Option { return Option(func(c *config) { c.open = open }) }

// pageFaults touches every page of a fresh 16 MiB anonymous mapping kept
// off huge pages: at least 4096 page faults.
func pageFaults(t *testing.T) uint64 {
	t.Helper()
	const size, page = 16 << 20, 4096
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(b)
	unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	for i := 0; i < size; i += page {
		b[i] = 1
	}
	return size / page
}

// contextSwitches bounces a byte between two threads over a blocking pipe
// n times: every read blocks its thread, which is a context switch.
func contextSwitches(t *testing.T, n int) {
	t.Helper()
	var ab, ba [2]int
	if err := unix.Pipe2(ab[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	if err := unix.Pipe2(ba[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, fd := range []int{ab[0], ab[1], ba[0], ba[1]} {
			unix.Close(fd)
		}
	}()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		b := make([]byte, 1)
		for range n {
			if _, err := unix.Read(ab[0], b); err != nil {
				done <- err
				return
			}
			if _, err := unix.Write(ba[1], b); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := []byte{1}
	for range n {
		if _, err := unix.Write(ab[1], b); err != nil {
			t.Fatal(err)
		}
		if _, err := unix.Read(ba[0], b); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func counterValue(t *testing.T, got map[string]metricdata.Metrics, name string, pid int) (int64, bool) {
	t.Helper()
	m, ok := got[name]
	if !ok {
		return 0, false
	}
	want, _ := semconv.LookupMetric(name)
	if m.Unit != want.Unit || m.Description != want.Brief {
		t.Errorf("%s: unit %q description %q, want %q %q", name, m.Unit, m.Description, want.Unit, want.Brief)
	}
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok || !s.IsMonotonic || s.Temporality != metricdata.CumulativeTemporality || len(s.DataPoints) != 1 {
		t.Fatalf("%s: %+v, want one cumulative monotonic point", name, m.Data)
	}
	if p := s.DataPoints[0]; p.Attributes != attribute.NewSet(semconv.ProcessPID(pid)) {
		t.Errorf("%s attributes %v, want process.pid=%d", name, p.Attributes.ToSlice(), pid)
	}
	return s.DataPoints[0].Value, true
}

// TestThisProcess counts this test process for real. The software events
// must work here; the hardware counters either work or say why not.
func TestThisProcess(t *testing.T) {
	mp, reader := procfstest.NewProvider(t)
	r := newReal(t, WithMeterProvider(mp), WithAllMetrics())
	defer r.Shutdown(context.Background())
	pid := os.Getpid()

	parts := r.Parts()
	if len(parts) != 2 || parts[0].Name != HardwarePart || parts[1].Name != SoftwarePart {
		t.Fatalf("Parts() = %+v", parts)
	}
	hw, sw := parts[0], parts[1]
	if sw.Err != nil || !containsEvent(sw.Events, PageFaults) {
		t.Fatalf("software events: %+v, want page faults counted", sw)
	}
	for _, e := range []Event{ContextSwitches, CPUMigrations} {
		if !containsEvent(sw.Events, e) && !(sw.UserOnly && len(sw.Missing) > 0) {
			t.Errorf("software event %s neither counted nor missing with a reason: %+v", e, sw)
		}
	}
	if hw.Err != nil {
		var ue *receivers.UnsupportedError
		if !errors.As(hw.Err, &ue) || ue.Reason == "" || len(hw.Events) != 0 {
			t.Fatalf("hardware counters: %+v, want a reason", hw)
		}
		t.Logf("perf (%s) here: %v", hw.Name, hw.Err)
	} else {
		t.Logf("perf (%s) here: counting %v", hw.Name, hw.Events)
	}

	first, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatal(err)
	}
	faults0, ok := counterValue(t, first, semconv.OrtelPerfPageFaultsName, pid)
	if !ok {
		t.Fatal("no ortel.perf.page_faults")
	}
	switches0, _ := counterValue(t, first, semconv.OrtelPerfContextSwitchesName, pid)

	touched := pageFaults(t)
	contextSwitches(t, 100)

	second, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatal(err)
	}
	faults1, _ := counterValue(t, second, semconv.OrtelPerfPageFaultsName, pid)
	if faults1-faults0 < int64(touched) {
		t.Errorf("page faults went from %d to %d after touching %d fresh pages", faults0, faults1, touched)
	}
	if containsEvent(sw.Events, ContextSwitches) {
		switches1, _ := counterValue(t, second, semconv.OrtelPerfContextSwitchesName, pid)
		if switches1-switches0 < 100 {
			t.Errorf("context switches went from %d to %d after 100 blocking round trips", switches0, switches1)
		}
	}
	if hw.Err == nil && containsEvent(hw.Events, Instructions) {
		if n, _ := counterValue(t, second, semconv.OrtelPerfInstructionsName, pid); n <= 0 {
			t.Errorf("instructions = %d after running code", n)
		}
		if _, ok := second[semconv.OrtelPerfIPCName]; !ok && containsEvent(hw.Events, Cycles) {
			t.Error("no ortel.perf.ipc on the second collection")
		}
	} else {
		for _, name := range []string{semconv.OrtelPerfInstructionsName, semconv.OrtelPerfCyclesName, semconv.OrtelPerfIPCName, semconv.OrtelPerfCacheHitRatioName} {
			if _, ok := second[name]; ok {
				t.Errorf("%s reported though the hardware counters are unsupported", name)
			}
		}
	}

	snap, err := r.Snapshot()
	if err != nil || len(snap) != 1 || snap[0].PID != pid || snap[0].Values[PageFaults] < uint64(faults1) {
		t.Errorf("Snapshot() = %+v, %v", snap, err)
	}
}

func containsEvent(list []Event, e Event) bool {
	for _, x := range list {
		if x == e {
			return true
		}
	}
	return false
}

// procRoot builds a proc tree naming this process's threads and a
// perf_event_paranoid value.
func procRoot(t *testing.T, paranoid string) string {
	t.Helper()
	root := t.TempDir()
	pid := strconv.Itoa(os.Getpid())
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if err := os.MkdirAll(filepath.Join(root, "proc", pid, "task", task.Name()), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "proc", "sys", "kernel")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "perf_event_paranoid"), []byte(paranoid+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// asSoftware opens a software clock in place of each hardware event, so
// the hardware part "works" on a machine without a PMU: real descriptors
// with real, growing counts.
func asSoftware(a *unix.PerfEventAttr, pid, cpu, group, flags int) (int, error) {
	if a.Type == unix.PERF_TYPE_HARDWARE {
		b := *a
		b.Type, b.Config = unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_TASK_CLOCK
		a = &b
	}
	return unix.PerfEventOpen(a, pid, cpu, group, flags)
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name        string
		paranoid    string
		open        eventOpener
		newErr      string // New fails with this reason, matching ErrUnsupported
		hwErr       string // else: the hardware part's reason ("" = counts)
		swEvents    []Event
		swMissing   string
		userOnly    bool
		hwEvents    []Event
		hwMissingIn string
	}{
		{
			name: "paranoid 3", paranoid: "3",
			open:   func(*unix.PerfEventAttr, int, int, int, int) (int, error) { return -1, unix.EACCES },
			newErr: "perf_event_paranoid is 3, which forbids perf events to unprivileged processes",
		},
		{
			name: "seccomp", paranoid: "2",
			open:   func(*unix.PerfEventAttr, int, int, int, int) (int, error) { return -1, unix.EPERM },
			newErr: "seccomp",
		},
		{
			name: "paranoid 2: user space only", paranoid: "2",
			open: func(a *unix.PerfEventAttr, pid, cpu, group, flags int) (int, error) {
				if a.Bits&unix.PerfBitExcludeKernel == 0 {
					return -1, unix.EACCES
				}
				return asSoftware(a, pid, cpu, group, flags)
			},
			hwEvents: []Event{Instructions, Cycles, CacheReferences, CacheMisses, BranchMisses},
			swEvents: []Event{PageFaults}, swMissing: "happens inside the kernel, and perf_event_paranoid is 2", userOnly: true,
		},
		{
			name: "no PMU", paranoid: "1",
			open: func(a *unix.PerfEventAttr, pid, cpu, group, flags int) (int, error) {
				if a.Type == unix.PERF_TYPE_HARDWARE {
					return -1, unix.ENOENT
				}
				return unix.PerfEventOpen(a, pid, cpu, group, flags)
			},
			hwErr:    "no hardware performance counters (no PMU",
			swEvents: []Event{ContextSwitches, PageFaults, CPUMigrations},
		},
		{
			name: "a PMU without cache events", paranoid: "1",
			open: func(a *unix.PerfEventAttr, pid, cpu, group, flags int) (int, error) {
				if a.Type == unix.PERF_TYPE_HARDWARE && (a.Config == unix.PERF_COUNT_HW_CACHE_MISSES || a.Config == unix.PERF_COUNT_HW_CACHE_REFERENCES) {
					return -1, unix.EOPNOTSUPP
				}
				return asSoftware(a, pid, cpu, group, flags)
			},
			hwEvents: []Event{Instructions, Cycles, BranchMisses}, hwMissingIn: "does not count this event",
			swEvents: []Event{ContextSwitches, PageFaults, CPUMigrations},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, reader := procfstest.NewProvider(t)
			r, err := New(WithRoot(procRoot(t, tt.paranoid)), WithMeterProvider(mp), WithAllMetrics(), withOpener(tt.open))
			if tt.newErr != "" {
				var ue *receivers.UnsupportedError
				if r != nil || !errors.Is(err, receivers.ErrUnsupported) || !errors.As(err, &ue) || !strings.Contains(ue.Reason, tt.newErr) {
					t.Fatalf("New = %v, %v; want an UnsupportedError with %q", r, err, tt.newErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer r.Shutdown(context.Background())
			hw, sw := r.Parts()[0], r.Parts()[1]
			if tt.hwErr != "" {
				if !errors.Is(hw.Err, receivers.ErrUnsupported) || !strings.Contains(hw.Err.Error(), tt.hwErr) || !strings.Contains(hw.Err.Error(), "perf (hardware counters)") {
					t.Errorf("hardware part Err = %v, want %q", hw.Err, tt.hwErr)
				}
			} else if hw.Err != nil || !slices.Equal(hw.Events, tt.hwEvents) {
				t.Errorf("hardware part = %+v, want %v counted", hw, tt.hwEvents)
			}
			if tt.hwMissingIn != "" && (len(hw.Missing) != 2 || !strings.Contains(hw.Missing[0].Error(), tt.hwMissingIn) || !errors.Is(hw.Missing[0], receivers.ErrUnsupported)) {
				t.Errorf("hardware part Missing = %v, want the two cache events with %q", hw.Missing, tt.hwMissingIn)
			}
			if sw.Err != nil || !slices.Equal(sw.Events, tt.swEvents) || sw.UserOnly != tt.userOnly || hw.UserOnly != tt.userOnly {
				t.Errorf("software part = %+v, want %v counted, user only %v", sw, tt.swEvents, tt.userOnly)
			}
			if tt.swMissing != "" {
				if len(sw.Missing) != 2 || !strings.Contains(sw.Missing[0].Error(), tt.swMissing) {
					t.Errorf("software Missing = %v, want context switches and migrations with %q", sw.Missing, tt.swMissing)
				}
			}

			// What is counted is reported, and nothing else.
			procfstest.CollectScope(t, reader, ScopeName)
			pageFaults(t)
			got, err := procfstest.CollectScope(t, reader, ScopeName)
			if err != nil {
				t.Fatal(err)
			}
			for _, info := range events {
				_, reported := got[info.metric]
				counted := containsEvent(hw.Events, info.event) || containsEvent(sw.Events, info.event)
				if reported != counted {
					t.Errorf("%s reported %v, counted %v", info.metric, reported, counted)
				}
			}
			_, ipc := got[semconv.OrtelPerfIPCName]
			if want := containsEvent(hw.Events, Instructions) && containsEvent(hw.Events, Cycles); ipc != want {
				t.Errorf("ortel.perf.ipc reported %v, want %v", ipc, want)
			}
			_, hit := got[semconv.OrtelPerfCacheHitRatioName]
			if want := containsEvent(hw.Events, CacheMisses); hit != want {
				t.Errorf("ortel.perf.cache.hit_ratio reported %v, want %v", hit, want)
			}
		})
	}
}

func TestNoSuchProcess(t *testing.T) {
	mp, _ := procfstest.NewProvider(t)
	r, err := New(WithMeterProvider(mp), WithPIDs(1<<30))
	if r != nil || err == nil || errors.Is(err, receivers.ErrUnsupported) || !strings.Contains(err.Error(), "no such process") || !strings.Contains(err.Error(), strconv.Itoa(1<<30)) {
		t.Fatalf("New = %v, %v; want an error naming the process", r, err)
	}
}

func TestWithMetric(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		want    []string
		wantErr string
	}{
		{"default software", nil, []string{semconv.OrtelPerfContextSwitchesName, semconv.OrtelPerfPageFaultsName, semconv.OrtelPerfCPUMigrationsName}, ""},
		{"page faults only", []Option{WithMetric(semconv.OrtelPerfContextSwitchesName, false), WithMetric(semconv.OrtelPerfCPUMigrationsName, false)}, []string{semconv.OrtelPerfPageFaultsName}, ""},
		{"unknown", []Option{WithMetric("ortel.perf.bogus", true)}, nil, `unknown metric "ortel.perf.bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, reader := procfstest.NewProvider(t)
			noPMU := func(a *unix.PerfEventAttr, pid, cpu, group, flags int) (int, error) {
				if a.Type == unix.PERF_TYPE_HARDWARE {
					return -1, unix.ENOENT
				}
				return unix.PerfEventOpen(a, pid, cpu, group, flags)
			}
			r, err := New(append([]Option{WithMeterProvider(mp), withOpener(noPMU)}, tt.opts...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Shutdown(context.Background())
			got, err := procfstest.CollectScope(t, reader, ScopeName)
			if err != nil {
				t.Fatal(err)
			}
			procfstest.AssertNames(t, got, tt.want...)
		})
	}
}
