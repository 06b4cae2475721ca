package instrument

import (
	"sync/atomic"
	"time"
)

// cpuCap keeps what operator profiling adds to a session's CPU under
// Profiling.MaxCPUShare of the time its runs take. It is a credit account:
// every run that ends well earns MaxCPUShare of its duration; every
// profiled run is charged what it cost on top of an unprofiled run (its
// extra duration, measured against the moving average of unprofiled runs)
// plus the CPU time spent reading its profile and emitting its operator
// spans (measured on the emitting thread). A run that sampling selects
// (EveryN, Ratio) is profiled only while the account is not in debt;
// otherwise the selection is postponed to the first run after the debt is
// paid. So the sampling interval lengthens to what the budget allows:
// over any stretch of runs, profiling's cost stays within MaxCPUShare of
// their time plus the cost of one profiled run. Runs owed to triggers and
// ProfileRuns are never refused, but they are charged.
//
// The account never holds credit, so sparse sampling does not save up for
// a burst of profiled runs later.
type cpuCap struct {
	share float64

	credit    atomic.Int64 // ns of profiling the session may still spend; <= 0
	plainAvg  atomic.Int64 // ns, moving average of an unprofiled run
	postponed atomic.Bool  // a sampled selection waits for the debt to be paid

	runs, throttled, spent, earned atomic.Int64
}

func newCPUCap(share float64) *cpuCap {
	if share <= 0 {
		return nil
	}
	return &cpuCap{share: min(share, 1)}
}

// plain accounts for an unprofiled run of duration d.
func (k *cpuCap) plain(d time.Duration) {
	k.runs.Add(1)
	// A moving average over about 32 runs; concurrent updates may lose one
	// another's step, which an average does not mind.
	avg := k.plainAvg.Load()
	if avg == 0 {
		k.plainAvg.Store(int64(d))
	} else {
		k.plainAvg.Store(avg + (int64(d)-avg)/32)
	}
	k.earn(d)
}

// earn credits share of d, never above zero.
func (k *cpuCap) earn(d time.Duration) {
	e := int64(k.share * float64(d))
	k.earned.Add(e)
	if c := k.credit.Add(e); c > 0 {
		k.credit.CompareAndSwap(c, 0)
	}
}

// profiledRun accounts for a profiled run of duration d: the share of an
// unprofiled run is earned, what it took beyond that is charged.
func (k *cpuCap) profiledRun(d time.Duration) {
	k.runs.Add(1)
	avg := time.Duration(k.plainAvg.Load())
	k.earn(min(avg, d))
	k.charge(d - avg)
}

// charge debits what profiling cost.
func (k *cpuCap) charge(d time.Duration) {
	if d <= 0 {
		return
	}
	k.spent.Add(int64(d))
	k.credit.Add(-int64(d))
}

// allow says whether a run may be profiled now. picked says sampling
// selected it; a run it did not select is profiled when an earlier
// selection was held back and the debt is paid. Selections held back in a
// row are made up by one profiled run.
func (k *cpuCap) allow(picked bool) bool {
	if !picked && !k.postponed.Load() {
		return false
	}
	if k.credit.Load() < 0 {
		if picked {
			k.postponed.Store(true)
			k.throttled.Add(1)
		}
		return false
	}
	if picked {
		k.postponed.Store(false)
		return true
	}
	return k.postponed.CompareAndSwap(true, false)
}

// measured returns the CPU spent on profiling over the time the runs took.
func (k *cpuCap) measured() float64 {
	earned := k.earned.Load()
	if earned == 0 {
		return 0
	}
	return float64(k.spent.Load()) / (float64(earned) / k.share)
}
