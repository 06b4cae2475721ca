package interference

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// maxCoRunners is how many co-runners a verdict names.
const maxCoRunners = 5

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// architecture Go supports.
const clockTick = 100

// verdict judges the samples overlapping [start, end]; m.mu is held.
func (m *Monitor) verdict(start, end time.Time) Verdict {
	v := Verdict{
		State: report.MeasurementStable, Sources: slices.Clone(m.sources),
		IntervalS: m.cfg.Interval.Seconds(), CPUs: slices.Clone(m.cpuList),
		LoadAvgStart: slices.Clone(m.loadStart),
	}
	var covered, affected float64
	share := map[string]float64{}
	peak := map[string]float64{}
	others := map[int]float64{}
	for _, s := range m.samples {
		a, b := maxTime(s.from, start), minTime(s.to, end)
		w := b.Sub(a).Seconds()
		if w <= 0 {
			continue
		}
		v.Samples++
		covered += w
		if len(s.values) > 0 {
			affected += w
		}
		for k, x := range s.values {
			share[k] += w
			peak[k] = max(peak[k], x)
		}
		for c, x := range s.othersOn {
			others[c] += w * x
		}
	}
	if covered == 0 {
		return v
	}
	v.AffectedShare = affected / covered
	for k, w := range share {
		v.Reasons = append(v.Reasons, Reason{Kind: k, Share: w / covered, Detail: detail(k, peak[k])})
	}
	sortReasons(v.Reasons)
	if v.AffectedShare > DisturbedShare {
		v.State = report.MeasurementDisturbed
	}
	if share[KindCoRunner] > 0 {
		v.CoRunners = m.coRunners()
	}
	if v.State == report.MeasurementDisturbed {
		v.Advice = advice(v, quietestCPU(others, m.cpuList))
	}
	return v
}

func sortReasons(rs []Reason) {
	slices.SortStableFunc(rs, func(a, b Reason) int {
		return order(a.Kind) - order(b.Kind)
	})
}

func order(kind string) int {
	if o, ok := kindOrder[kind]; ok {
		return o
	}
	return kindOrderUnknown
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// detail says what a reason's peak reading was.
func detail(kind string, peak float64) string {
	switch kind {
	case KindSteal:
		return fmt.Sprintf("the hypervisor took up to %s of the cores' time for other guests (threshold %s)", units.Percent(peak, 0), units.Percent(StealMax, 0))
	case KindCoRunner:
		return fmt.Sprintf("other processes used up to %.2f of a core on the bench's cores (threshold %.2f)", peak, CoRunnerMax)
	case KindRunQueue:
		return fmt.Sprintf("up to %.0f runnable tasks, more than the CPUs could run", peak)
	case KindPSICPU, KindPSIMemory, KindPSIIO:
		res := strings.TrimPrefix(kind, "psi-")
		return fmt.Sprintf("tasks stalled waiting for %s up to %s of the time (pressure stall information)", res, units.Percent(peak, 0))
	case KindThrottling:
		return fmt.Sprintf("the CPU was thermally throttled (%.0f events in one sample)", peak)
	case KindInvoluntary:
		return fmt.Sprintf("the bench's threads were preempted up to %.0f times a second (threshold %d)", peak, InvoluntaryMaxPerS)
	case KindPageFaults:
		return fmt.Sprintf("up to %.0f major page faults a second (reads from disk; threshold %d)", peak, PageFaultsMaxPerS)
	}
	return ""
}

// coRunners names the processes that used the bench's cores most.
func (m *Monitor) coRunners() []report.CoRunner {
	var out []report.CoRunner
	for pid, c := range m.culprits {
		out = append(out, report.CoRunner{PID: pid, Comm: c.comm, CPUS: float64(c.ticks) / clockTick})
	}
	slices.SortFunc(out, func(a, b report.CoRunner) int {
		if a.CPUS != b.CPUS {
			if a.CPUS > b.CPUS {
				return -1
			}
			return 1
		}
		return a.PID - b.PID
	})
	return out[:min(len(out), maxCoRunners)]
}

// quietestCPU is the core others used least, -1 when unknown.
func quietestCPU(others map[int]float64, cpus []int) int {
	best, bestV := -1, 0.0
	for _, c := range cpus {
		if x, ok := others[c]; ok && (best < 0 || x < bestV) {
			best, bestV = c, x
		}
	}
	return best
}

// advice says what would make a disturbed measurement trustworthy.
func advice(v Verdict, quiet int) []string {
	var out []string
	has := map[string]bool{}
	for _, r := range v.Reasons {
		has[r.Kind] = true
	}
	pin := "pin the bench to one core with taskset -c N"
	if quiet >= 0 {
		pin = fmt.Sprintf("pin the bench to the core others used least: taskset -c %d ortel bench ...", quiet)
	}
	if has[KindCoRunner] {
		if len(v.CoRunners) > 0 {
			var names []string
			for _, c := range v.CoRunners {
				names = append(names, fmt.Sprintf("pid %d (%s, %.1f s of CPU)", c.PID, c.Comm, c.CPUS))
			}
			out = append(out, "stop the co-runner or move it off the bench's cores: "+strings.Join(names, ", "))
		} else {
			out = append(out, "stop the other programs using the bench's cores (top -o %CPU names them)")
		}
	}
	if has[KindCoRunner] || has[KindRunQueue] || has[KindInvoluntary] || has[KindPSICPU] {
		out = append(out, pin+", and keep other work off that core (isolcpus= at boot, or a cpuset cgroup)")
	}
	if has[KindSteal] {
		out = append(out, "the hypervisor lends these vCPUs to other guests: measure on a dedicated host or instance")
	}
	if has[KindThrottling] {
		out = append(out, "the CPU throttles when hot: let it cool, check its cooling and power profile")
	}
	if has[KindPSIMemory] || has[KindPageFaults] {
		out = append(out, "free memory (close programs, avoid swap) so the model and its libraries stay resident")
	}
	if has[KindPSIIO] {
		out = append(out, "stop heavy disk work during the bench")
	}
	if has[KindDrift] {
		out = append(out, "latency drifted over the phase: warm up longer (--warmup auto)")
	}
	out = append(out, "to compare two configurations on a busy machine, measure both in one invocation, interleaved: ortel bench --ab")
	return out
}
