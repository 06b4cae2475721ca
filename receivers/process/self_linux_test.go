//go:build linux

package process

import (
	"os"
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// TestSelfMatchesProc reads this process both ways: through getrusage
// (the fast path for this process) and through /proc/self/stat and
// /proc/self/status (the path of every other process; an injected opener
// turns the fast path off). Counters are read /proc, fast path, /proc, so
// the fast path's must lie between.
func TestSelfMatchesProc(t *testing.T) {
	pid := os.Getpid()
	// On "/" whatever ORTEL_HOST_ROOT says: under another root "self" is
	// not this process, and the fast path is rightly off.
	fast, err := New(WithRoot("/"), WithAllMetrics())
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Shutdown(t.Context())
	slow, err := New(WithRoot("/"), WithAllMetrics(), withOpener(procfs.Open))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Shutdown(t.Context())
	if !fast.procs[0].h.(*procFiles).self || slow.procs[0].h.(*procFiles).self {
		t.Fatal("the fast path is not where it should be")
	}
	read := func(r *Receiver) sample {
		t.Helper()
		var fail procfs.Failures
		if !readProc(t.Context(), r.procs[0], want{stat: true, status: true}, &fail) {
			t.Fatalf("read pid %d: %v", pid, fail.Err())
		}
		if err := fail.Err(); err != nil {
			t.Fatal(err)
		}
		return r.procs[0].cur
	}
	before := read(slow)
	got := read(fast)
	after := read(slow)

	const tick = 0.01 // /proc counts in USER_HZ ticks and truncates
	if cpu := got.user + got.system; cpu < before.user+before.system-2*tick || cpu > after.user+after.system+2*tick {
		t.Errorf("CPU time %v s, /proc says %v then %v", cpu, before.user+before.system, after.user+after.system)
	}
	if got.minflt < before.minflt || got.minflt > after.minflt || got.majflt < before.majflt || got.majflt > after.majflt {
		t.Errorf("faults %d/%d, /proc says %d/%d then %d/%d", got.minflt, got.majflt, before.minflt, before.majflt, after.minflt, after.majflt)
	}
	if got.threads < 1 || got.threads != before.threads && got.threads != after.threads {
		t.Errorf("threads %d, /proc says %d then %d", got.threads, before.threads, after.threads)
	}
	if got.cpus != before.cpus || got.cpus < 1 {
		t.Errorf("CPUs %d, Cpus_allowed_list says %d", got.cpus, before.cpus)
	}
	// /proc/PID/status counts the main thread's switches only; getrusage
	// counts every thread's.
	if got.voluntary < before.voluntary || got.involuntary < before.involuntary {
		t.Errorf("context switches %d/%d below the main thread's %d/%d", got.voluntary, got.involuntary, before.voluntary, before.involuntary)
	}
	if got.peakRSS < got.rss || got.rss == 0 {
		t.Errorf("peak RSS %d, RSS %d", got.peakRSS, got.rss)
	}
}
