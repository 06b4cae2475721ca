package interference

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
)

func reasonOf(v Verdict, kind string) (Reason, bool) {
	for _, r := range v.Reasons {
		if r.Kind == kind {
			return r, true
		}
	}
	return Reason{}, false
}

// TestVerdictOnFixtures drives a Monitor over fake /proc trees: a quiet
// machine, steal, a co-runner on the bench's core for half the phase, a
// pressure stall, preemptions and page faults.
func TestVerdictOnFixtures(t *testing.T) {
	tests := []struct {
		name      string
		step      func(h *host, i int) // sample i of 10
		wantState string
		wantKind  string
		wantShare float64
	}{
		{"quiet", func(h *host, i int) { h.step(1, 18, 0, 0) }, report.MeasurementStable, "", 0},
		{"steal", func(h *host, i int) { h.step(1, 15, 0, 3) }, report.MeasurementDisturbed, KindSteal, 1},
		{"co-runner half the phase", func(h *host, i int) {
			if i < 5 {
				h.step(1, 18, 0, 0)
				return
			}
			h.step(1, 10, 10, 0)
			p := h.procs[777]
			p.comm, p.processor, p.ticks = "spin loop", 1, p.ticks+10
			h.procs[777] = p
			h.write()
		}, report.MeasurementDisturbed, KindCoRunner, 0.5},
		{"another core's load is not the bench's", func(h *host, i int) { h.step(1, 18, 0, 0); h.cpus[0][0] += 20; h.cpus[0][1] -= 20; h.write() },
			report.MeasurementStable, "", 0},
		{"psi memory", func(h *host, i int) { h.step(1, 18, 0, 0); h.psi["memory"] += 50_000; h.write() },
			report.MeasurementDisturbed, KindPSIMemory, 1},
		{"preempted while another process ran", func(h *host, i int) { h.step(1, 15, 3, 0); h.nvcsw += 30; h.write() },
			report.MeasurementDisturbed, KindInvoluntary, 1},
		{"preempted by its own threads only", func(h *host, i int) { h.step(1, 18, 0, 0); h.nvcsw += 30; h.write() },
			report.MeasurementStable, "", 0},
		{"cpu pressure while another process ran", func(h *host, i int) { h.step(1, 15, 3, 0); h.psi["cpu"] += 100_000; h.write() },
			report.MeasurementDisturbed, KindPSICPU, 1},
		{"cpu pressure among its own threads only", func(h *host, i int) { h.step(1, 18, 0, 0); h.psi["cpu"] += 100_000; h.write() },
			report.MeasurementStable, "", 0},
		{"page faults", func(h *host, i int) { h.step(1, 18, 0, 0); h.majflt += 4; h.write() },
			report.MeasurementDisturbed, KindPageFaults, 1},
		// The first sample starts from the quiet first reading: a queue
		// counts when both ends of a sample see it.
		{"run queue", func(h *host, i int) { h.step(1, 18, 0, 0); h.running = 5; h.write() },
			report.MeasurementDisturbed, KindRunQueue, 0.9},
		{"a queue in one reading only", func(h *host, i int) {
			h.running = 1
			if i == 4 {
				h.running = 5
			}
			h.step(1, 18, 0, 0)
		}, report.MeasurementStable, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHost(t, 2, "1")
			h.ownCPU = 1
			m, t0 := h.monitor(nil)
			for i := range 10 {
				tt.step(h, i)
				m.tick(sampleAt(t0, i+1))
			}
			v := m.stopAt(sampleAt(t0, 10))
			if v.State != tt.wantState {
				t.Fatalf("state %q, want %q (reasons %+v)", v.State, tt.wantState, v.Reasons)
			}
			if tt.wantKind == "" {
				if len(v.Reasons) != 0 || len(v.Advice) != 0 {
					t.Errorf("quiet phase has reasons %+v, advice %q", v.Reasons, v.Advice)
				}
				return
			}
			r, ok := reasonOf(v, tt.wantKind)
			if !ok {
				t.Fatalf("no %s reason in %+v", tt.wantKind, v.Reasons)
			}
			if math.Abs(r.Share-tt.wantShare) > 0.01 || math.Abs(v.AffectedShare-tt.wantShare) > 0.01 {
				t.Errorf("%s share %.2f, affected %.2f, want %.2f", tt.wantKind, r.Share, v.AffectedShare, tt.wantShare)
			}
			if len(v.Advice) == 0 || r.Detail == "" {
				t.Errorf("disturbed verdict without detail or advice: %+v", v)
			}
		})
	}
}

// TestCoRunnerIsNamed: the co-runner's pid and name reach the verdict and
// its advice, and the advice pins to the core nobody else used.
func TestCoRunnerIsNamed(t *testing.T) {
	h := newHost(t, 3, "0-2")
	h.ownCPU = 1
	m, t0 := h.monitor(nil)
	for i := range 20 {
		h.step(1, 10, 10, 0)
		h.cpus[2][0] += 5 // a light neighbour on CPU 2, none on CPU 0
		h.cpus[2][1] -= 5
		p := h.procs[777]
		p.comm, p.processor, p.ticks = "spin loop", 1, p.ticks+10
		h.procs[777] = p
		h.write()
		m.tick(sampleAt(t0, (i+1)*3)) // 600 ms apart: a scan each second
	}
	v := m.stopAt(sampleAt(t0, 60))
	if len(v.CoRunners) == 0 || v.CoRunners[0].PID != 777 || v.CoRunners[0].Comm != "spin loop" {
		t.Fatalf("co-runners %+v, want pid 777 (spin loop) first", v.CoRunners)
	}
	all := strings.Join(v.Advice, "\n")
	for _, want := range []string{"pid 777 (spin loop", "taskset -c 0 ", "--ab"} {
		if !strings.Contains(all, want) {
			t.Errorf("advice lacks %q:\n%s", want, all)
		}
	}
}

// TestWindowJudgesASubInterval: a window over the quiet half is stable,
// over the disturbed half disturbed.
func TestWindowJudgesASubInterval(t *testing.T) {
	h := newHost(t, 2, "1")
	h.ownCPU = 1
	m, t0 := h.monitor(nil)
	for i := range 10 {
		if i < 5 {
			h.step(1, 18, 0, 0)
		} else {
			h.step(1, 15, 0, 5)
		}
		m.tick(sampleAt(t0, i+1))
	}
	if v := m.Window(t0, sampleAt(t0, 5)); v.State != report.MeasurementStable || v.Samples != 5 {
		t.Errorf("quiet half: %s over %d samples, want stable over 5", v.State, v.Samples)
	}
	v := m.Window(sampleAt(t0, 5), sampleAt(t0, 10))
	if r, ok := reasonOf(v, KindSteal); !ok || v.State != report.MeasurementDisturbed || r.Share != 1 {
		t.Errorf("steal half: %+v", v)
	}
}

// TestMissingSourcesAreUnavailable: a kernel without PSI or throttle
// counters gives a verdict with those sources unavailable, not an error;
// without /proc/stat, Start fails naming it.
func TestMissingSourcesAreUnavailable(t *testing.T) {
	h := newHost(t, 2, "0-1")
	if err := os.RemoveAll(h.root + "/proc/pressure"); err != nil {
		t.Fatal(err)
	}
	h.psi = nil
	m, err := Start(context.Background(), Config{HostRoot: h.root, PID: fixturePID, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	v := m.Stop()
	avail := map[string]bool{}
	for _, s := range v.Sources {
		avail[s.Source] = s.Available
		if !s.Available && s.Reason == "" {
			t.Errorf("source %s unavailable without a reason", s.Source)
		}
	}
	if avail[srcPSICPU] || avail[srcThrottle] || !avail[srcStat] || !avail[srcTasks] {
		t.Errorf("sources %+v", v.Sources)
	}
	if v.State != report.MeasurementStable || len(v.LoadAvgStart) != 3 {
		t.Errorf("verdict %+v", v)
	}
	_, err = Start(context.Background(), Config{HostRoot: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "proc/stat") {
		t.Errorf("no /proc/stat: err %v, want one naming proc/stat", err)
	}
}

// TestRealProcIsReadable reads this machine's /proc: every Linux has
// proc/stat and the process's threads.
func TestRealProcIsReadable(t *testing.T) {
	m, err := Start(context.Background(), Config{Interval: 10 * time.Millisecond})
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	v := m.Stop()
	if v.Samples == 0 || len(v.CPUs) == 0 {
		t.Errorf("verdict %+v: want samples and CPUs", v)
	}
	for _, s := range v.Sources {
		if (s.Source == srcStat || s.Source == srcTasks) && !s.Available {
			t.Errorf("%s unavailable: %s", s.Source, s.Reason)
		}
	}
}

// BenchmarkSample is the cost of one sample on this machine's /proc (every
// source read and judged), paid every Interval on a thread of the bench.
func BenchmarkSample(b *testing.B) {
	m, err := newMonitor(Config{}, time.Now())
	if err != nil {
		b.Skipf("no /proc here: %v", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.tick(time.Now())
	}
}

// TestStateIsLatestSampleAndLockFree: State says the latest sample's
// state, and answers while the monitor's lock is held (a disturbed sample
// holds it while it reads every process), since bench calls it once per
// measured request.
func TestStateIsLatestSampleAndLockFree(t *testing.T) {
	h := newHost(t, 2, "1")
	h.ownCPU = 1
	m, t0 := h.monitor(nil)
	if got := m.State(); got != "" {
		t.Fatalf("State before any sample = %q, want \"\"", got)
	}
	h.step(1, 18, 0, 0)
	m.tick(sampleAt(t0, 1))
	if got := m.State(); got != report.MeasurementStable {
		t.Fatalf("State after a quiet sample = %q, want stable", got)
	}
	h.step(1, 15, 0, 3)
	m.tick(sampleAt(t0, 2))
	m.mu.Lock()
	defer m.mu.Unlock()
	got := make(chan string, 1)
	go func() { got <- m.State() }()
	select {
	case s := <-got:
		if s != report.MeasurementDisturbed {
			t.Fatalf("State after a steal sample = %q, want disturbed", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("State blocked on the monitor's lock")
	}
}

// TestAlsoProcessesAreOwn: a process named in Config.Also (an A/B side's
// child process) using the bench's core is the bench's own work, not a
// co-runner; the same process not named is a co-runner.
func TestAlsoProcessesAreOwn(t *testing.T) {
	for _, also := range []bool{false, true} {
		h := newHost(t, 2, "0-1")
		h.ownCPU = 1
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		cfg := Config{HostRoot: h.root, PID: fixturePID, Interval: 200 * time.Millisecond}
		if also {
			cfg.Also = []int{777}
		}
		child := func(ticks uint64) {
			h.procs[777] = fakeProc{comm: "ortel", processor: 1, ticks: ticks}
			h.write()
			h.file("proc/777/task/777/stat", statLine(777, "ortel", ticks, 0, 1))
			h.file("proc/777/task/777/status", "Name:\tortel\nvoluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t0\n")
		}
		child(0)
		m, err := newMonitor(cfg, t0)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			h.step(1, 2, 15, 0) // the parent waits on its child, which runs
			child(uint64(15 * (i + 1)))
			m.tick(sampleAt(t0, (i+1)*3))
		}
		v := m.stopAt(sampleAt(t0, 60))
		coRunner := false
		for _, r := range v.Reasons {
			coRunner = coRunner || r.Kind == KindCoRunner
		}
		if coRunner == also {
			t.Errorf("Also %v: co-runner reason %v (reasons %+v, co-runners %+v)", also, coRunner, v.Reasons, v.CoRunners)
		}
	}
}
