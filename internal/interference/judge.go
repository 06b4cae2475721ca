package interference

import (
	"errors"
	"path/filepath"
	"strconv"
	"time"
)

// Reason kinds.
const (
	KindSteal        = "steal"
	KindCoRunner     = "co-runner"
	KindRunQueue     = "run-queue"
	KindPSICPU       = "psi-cpu"
	KindPSIMemory    = "psi-memory"
	KindPSIIO        = "psi-io"
	KindThrottling   = "throttling"
	KindInvoluntary  = "involuntary-switches"
	KindPageFaults   = "page-faults"
	KindDrift        = "drift"
	kindOrderUnknown = 99
)

// kindOrder orders reasons in a verdict: the causes a user can act on
// first.
var kindOrder = map[string]int{
	KindCoRunner: 0, KindSteal: 1, KindRunQueue: 2, KindThrottling: 3, KindPSIMemory: 4,
	KindPSIIO: 5, KindPSICPU: 6, KindInvoluntary: 7, KindPageFaults: 8, KindDrift: 9,
}

// Thresholds, per sample. A sample crossing any of them is disturbed.
const (
	// StealMax: the hypervisor ran another guest on the bench's vCPUs
	// for more than 5% of a sample. A few tenths of a percent is the
	// background of a shared cloud host; 5% is one tick in 20 per CPU,
	// above the tick granularity, and already a 5% stretch of every run
	// it lands on.
	StealMax = 0.05
	// CoRunnerMax: processes other than the bench used more than 20% of a
	// bench core (in cores: 0.2) in a sample. Kernel threads, the
	// telemetry exporter's neighbours and a shell stay well below; a
	// program taking a fifth of a core the bench runs on delays the
	// bench's threads by about that much whenever they want the core.
	CoRunnerMax = 0.20
	// RunQueueExcess: more runnable tasks (procs_running, which counts
	// the sampler's own thread) than online CPUs plus one means a task
	// waited for a CPU at that instant. It counts only when more than
	// RunQueueExcess of those tasks are other processes': the bench's own
	// threads outnumbering the cores (ONNX Runtime's pool beside the
	// calling thread) is its configuration, not interference.
	RunQueueExcess = 1
	// OtherMin: other processes used at least 15% of a bench core (three
	// clock ticks in a 200 ms sample: one or two are the tick accounting's
	// own error, since a thread's ticks and a CPU's are sampled apart, and
	// the kernel's housekeeping threads). CPU pressure and preemptions count
	// as interference only in samples where someone else ran: alone, the
	// bench's threads preempt each other and stall on each other (ONNX
	// Runtime's spinning pool, the Go runtime's threads), thousands of
	// times a second on a quiet 2-core VM, and that is the bench's own
	// configuration (--threads), the same in every phase.
	OtherMin = 0.15
	// PSICPUMax, PSIMemoryMax, PSIIOMax: the share of a sample in which
	// some task stalled waiting for the resource (PSI "some"). CPU
	// pressure counts the bench's own threads competing with each other,
	// so it is allowed 20%; memory stalls (reclaim, swap-in) are rare on
	// a machine with room and cost whole runs, so 5%; I/O 10%.
	PSICPUMax    = 0.20
	PSIMemoryMax = 0.05
	PSIIOMax     = 0.10
	// InvoluntaryMaxPerS: the bench's threads were preempted more than
	// 50 times a second. A preempted thread waits a scheduler slice
	// (milliseconds) for the task that took its CPU; a thread alone on its
	// core is preempted a few times a second by kernel work.
	InvoluntaryMaxPerS = 50
	// PageFaultsMaxPerS: more than 5 major page faults a second, each a
	// read from disk (0.1 to 10 ms) inside a run.
	PageFaultsMaxPerS = 5
	// DisturbedShare: a phase is disturbed when more than 5% of its time
	// was disturbed: runs in 5% of a phase move its p95 and above.
	DisturbedShare = 0.05
)

var errNoThrottle = errors.New("no thermal_throttle counters under sys/devices/system/cpu (Intel bare metal has them)")

func procPath(root string, pid int, name string) string {
	return filepath.Join(root, "proc", strconv.Itoa(pid), name)
}

// sample is the judgement of the interval between two snapshots.
type sample struct {
	from, to time.Time
	// values holds, for each kind that crossed its threshold, the reading
	// (share, cores or rate) that did.
	values map[string]float64
	// other is the CPU other processes used on the bench's cores, in
	// cores; othersOn[c] their share of CPU c (for advice; the bench's own
	// time is placed on the CPU each thread last ran on).
	other    float64
	othersOn map[int]float64
}

// judge compares two snapshots. cpus are the bench's cores; affinityIn
// says whether the process can run only on them (then all its CPU time is
// theirs).
func judge(prev, cur snapshot, cpus map[int]bool, affinityIn bool) sample {
	s := sample{from: prev.t, to: cur.t, values: map[string]float64{}, othersOn: map[int]float64{}}
	dt := cur.t.Sub(prev.t).Seconds()
	if dt <= 0 {
		return s
	}
	if prev.cpus != nil && cur.cpus != nil {
		ownOn := ownPerCPU(prev.tasks, cur.tasks, cpus, affinityIn)
		var busy, steal, total uint64
		n := 0
		for c := range cpus {
			a, okA := prev.cpus[c]
			b, okB := cur.cpus[c]
			if !okA || !okB || b.total < a.total {
				continue
			}
			n++
			busy += sub(b.busy, a.busy)
			steal += sub(b.steal, a.steal)
			total += b.total - a.total
			if d := b.total - a.total; d > 0 {
				s.othersOn[c] = max(0, float64(sub(b.busy, a.busy))-float64(ownOn[c])) / float64(d)
			}
		}
		if total > 0 && n > 0 {
			if st := float64(steal) / float64(total); st > StealMax {
				s.values[KindSteal] = st
			}
			perCPU := float64(total) / float64(n) // ticks of one CPU in the sample
			own := ownTicks(prev.tasks, cur.tasks, cpus, affinityIn)
			s.other = max(0, float64(busy)-float64(own)) / perCPU
			if s.other > CoRunnerMax {
				s.values[KindCoRunner] = s.other
			}
		}
	}
	others := s.other >= OtherMin
	if queued(cur) && queued(prev) {
		s.values[KindRunQueue] = float64(cur.running)
	}
	for _, p := range psiSources {
		a, okA := prev.psi[p.resource]
		b, okB := cur.psi[p.resource]
		if !okA || !okB {
			continue
		}
		share := float64(sub(b, a)) / (dt * 1e6)
		limit := map[string]float64{KindPSICPU: PSICPUMax, KindPSIMemory: PSIMemoryMax, KindPSIIO: PSIIOMax}[p.kind]
		if share > limit && (p.kind != KindPSICPU || others) {
			s.values[p.kind] = min(share, 1)
		}
	}
	if prev.hasThrot && cur.hasThrot && cur.throttle > prev.throttle {
		s.values[KindThrottling] = float64(cur.throttle - prev.throttle)
	}
	if prev.tasks != nil && cur.tasks != nil {
		var n uint64
		for tid, b := range cur.tasks {
			if a, ok := prev.tasks[tid]; ok && a.hasNvcsw && b.hasNvcsw {
				n += sub(b.nvcsw, a.nvcsw)
			}
		}
		if r := float64(n) / dt; r > InvoluntaryMaxPerS && others {
			s.values[KindInvoluntary] = r
		}
	}
	if prev.hasProc && cur.hasProc {
		if r := float64(sub(cur.majflt, prev.majflt)) / dt; r > PageFaultsMaxPerS {
			s.values[KindPageFaults] = r
		}
	}
	return s
}

// ownTicks is the CPU time the process's threads spent on cpus between
// two snapshots: all of it when its affinity is within cpus, else that of
// the threads whose last CPU is one of them.
func ownTicks(prev, cur map[int]task, cpus map[int]bool, affinityIn bool) uint64 {
	var n uint64
	for _, u := range ownPerCPU(prev, cur, cpus, affinityIn) {
		n += u
	}
	return n
}

func ownPerCPU(prev, cur map[int]task, cpus map[int]bool, affinityIn bool) map[int]uint64 {
	out := map[int]uint64{}
	for tid, b := range cur {
		if !affinityIn && !cpus[b.processor] {
			continue
		}
		// A thread born in the sample counts from zero.
		out[b.processor] += sub(b.ticks, prev[tid].ticks)
	}
	return out
}

// queued says whether a snapshot saw more runnable tasks than CPUs plus
// RunQueueExcess, more than RunQueueExcess of them other processes'. A
// sample counts it only when both of its ends saw it: procs_running is an
// instant, read apart from the threads' states, and one reading in a
// sample is as often the reading's own timing as a queue.
func queued(s snapshot) bool {
	return s.running >= 0 && len(s.cpus) > 0 && s.running > len(s.cpus)+RunQueueExcess &&
		s.running-ownRunning(s.tasks) > RunQueueExcess
}

// ownRunning counts the process's threads that were runnable when read.
func ownRunning(tasks map[int]task) int {
	n := 0
	for _, t := range tasks {
		if t.running {
			n++
		}
	}
	return n
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
