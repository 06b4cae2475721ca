//go:build linux

package process

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// threadPIDs returns the pids that process.thread.count has points for.
func threadPIDs(t *testing.T, collect func() (map[string]metricdata.Metrics, error)) []int64 {
	t.Helper()
	got, err := collect()
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	var out []int64
	for pid := range pidsOf(got[semconv.ProcessThreadCountName]) {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// TestWatchUnwatch: a receiver started empty (WithoutSelf) observes
// nothing; Watch adds processes to the next collection, Unwatch removes
// them, a repeated Watch adds no second series, and a missing pid is an
// error naming it that leaves the others watched.
func TestWatchUnwatch(t *testing.T) {
	r, collect := newTest(t, WithRoot("testdata/two"), WithoutSelf())
	if got := threadPIDs(t, collect); len(got) != 0 {
		t.Fatalf("empty receiver observed pids %v", got)
	}
	if err := r.Watch(100); err != nil {
		t.Fatal(err)
	}
	if got := threadPIDs(t, collect); !slices.Equal(got, []int64{100}) {
		t.Fatalf("after Watch(100): pids %v, want [100]", got)
	}
	err := r.Watch(200, 100, 999, -1)
	if err == nil || !strings.Contains(err.Error(), "pid 999") || !strings.Contains(err.Error(), "pid -1") {
		t.Fatalf("Watch(200, 100, 999, -1) = %v, want errors naming pid 999 and pid -1", err)
	}
	if got := threadPIDs(t, collect); !slices.Equal(got, []int64{100, 200}) {
		t.Fatalf("after Watch(200, 100, 999): pids %v, want [100 200]", got)
	}
	if got := r.PIDs(); !slices.Equal(got, []int{100, 200}) {
		t.Fatalf("PIDs() = %v, want [100 200]", got)
	}
	if err := r.Unwatch(100, 12345); err != nil {
		t.Fatal(err)
	}
	if got := threadPIDs(t, collect); !slices.Equal(got, []int64{200}) {
		t.Fatalf("after Unwatch(100): pids %v, want [200]", got)
	}
	// Back again after Unwatch: a fresh process, observed again.
	if err := r.Watch(100); err != nil {
		t.Fatal(err)
	}
	if got := threadPIDs(t, collect); !slices.Equal(got, []int64{100, 200}) {
		t.Fatalf("after Watch(100) again: pids %v, want [100 200]", got)
	}
	if err := r.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := r.Watch(100); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Fatalf("Watch after Shutdown = %v, want an error saying it is shut down", err)
	}
}

// sleeper starts a real process that waits to be killed, and returns its
// pid and a function that kills and reaps it (its /proc/PID is then gone).
func sleeper(t *testing.T) (int, func()) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal("cannot start sleep:", err)
	}
	kill := func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(kill)
	return cmd.Process.Pid, kill
}

// TestWatchedProcessExits watches real processes that exit: one added by
// Watch is dropped without an error (whoever added it notices), and the
// failure numbers it held are free for the next; one given to New is still
// reported once.
func TestWatchedProcessExits(t *testing.T) {
	first, killFirst := sleeper(t)
	second, killSecond := sleeper(t)
	r, collect := newTest(t, WithPIDs(first))
	if err := r.Watch(second); err != nil {
		t.Fatal(err)
	}
	if got := threadPIDs(t, collect); !slices.Equal(got, sorted(first, second)) {
		t.Fatalf("pids %v, want %v", got, sorted(first, second))
	}
	killSecond()
	if got := threadPIDs(t, collect); !slices.Equal(got, sorted(first)) {
		t.Fatalf("after %d exited: pids %v, want [%d]", second, got, first)
	}
	if got := r.PIDs(); !slices.Equal(got, []int{first}) {
		t.Fatalf("PIDs() = %v after %d exited, want [%d]", got, second, first)
	}
	if len(r.procs) != 1 {
		t.Fatalf("%d processes held after %d exited, want 1: an exited process must be dropped", len(r.procs), second)
	}
	killFirst()
	if _, err := collect(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pid %d exited", first)) {
		t.Fatalf("collect after %d (given to New) exited = %v, want its exit reported", first, err)
	}
	if _, err := collect(); err != nil {
		t.Fatalf("second collect after %d exited = %v, want nothing more", first, err)
	}
	if r.next != 2*numFail || len(r.free) != 2 {
		t.Fatalf("failure numbers: next %d, free %v; want both bases free for reuse", r.next, r.free)
	}
}

func sorted(pids ...int) []int64 {
	out := make([]int64, len(pids))
	for i, p := range pids {
		out[i] = int64(p)
	}
	slices.Sort(out)
	return out
}

// TestWatchConcurrentSafe runs Watch and Unwatch against collections and
// snapshots (run it with -race).
func TestWatchConcurrentSafe(t *testing.T) {
	r, collect := newTest(t, WithRoot("testdata/two"), WithPIDs(100))
	procfstest.Concurrent{
		Rounds:   20,
		Collect:  func() error { _, err := collect(); return err },
		Snapshot: func() error { _, err := r.Snapshot(); return err },
		Also: func() {
			if err := r.Watch(200); err != nil {
				t.Error(err)
			}
			_ = r.PIDs()
			if err := r.Unwatch(200); err != nil {
				t.Error(err)
			}
		},
	}.Run(t)
}
