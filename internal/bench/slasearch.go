package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// DefaultSLABudget is the time the SLA search may take, its closed-loop
// capacity phase included (--sla-budget).
const DefaultSLABudget = 5 * time.Minute

// Search bounds.
const (
	// searchTolerance ends the bisection when the lowest rate proven to
	// miss is within this fraction above the highest proven to meet.
	searchTolerance = 0.05
	// DefaultMaxTrials caps the trials of one search.
	DefaultMaxTrials = 20
	// trialMaxViolations is the most requests over the threshold a trial
	// may see and still go on: a trial that cannot prove the SLA at its
	// planned size after a stray stall or two is extended, up to the size
	// that proves it with this many over (trialRule's looks), rather than
	// failed.
	trialMaxViolations = 4
	// maxStepUp caps the step above the highest rate met while a bound
	// above is known: near the peak the chance that a trial proves the SLA
	// falls fast with the rate (PaddleOCR det 640x640 as M/G/1 at a 200ms
	// p98: 75% at 2.68 requests/s, 53% at 3.0, 0% at 4.43, the midpoint
	// to the probe's miss), and each trial there takes a minute or more of
	// the budget, so the bisection midpoint to a far upper bound wastes it.
	maxStepUp = 0.15
	// firstTrialProof is the chance with which the first full trial should
	// prove the SLA met: its rate is the one the queue model predicts for
	// the share over the threshold at which the trial's test says met this
	// often (see firstRate).
	firstTrialProof = 0.8
	// probeShare is the upper probe's rate as a share of the predicted
	// rate (at most the closed-loop capacity): high enough that a trial
	// there misses within a few dozen requests, which bounds the bracket
	// from above before the long trial that bounds it from below.
	probeShare = 1.5
	// firstTrialShare is the most of the budget left that the first trial
	// may need to prove the SLA met; when the asked percentile needs more
	// at the first rate, trials are judged at a lower one.
	firstTrialShare = 0.7
	// capacityShare is the part of the budget the closed-loop capacity
	// phase gets (between minCapacityPhase and maxCapacityPhase).
	capacityShare    = 1.0 / 15
	minCapacityPhase = 2 * time.Second
	maxCapacityPhase = 20 * time.Second
	// intervalConfidence is the confidence of the percentile interval a
	// trial shows beside its verdict.
	intervalConfidence = 0.95
)

// fallbackPercentiles are the percentiles a search judges at, in order,
// when the asked one cannot be proven within the budget.
var fallbackPercentiles = []float64{99, 98, 97, 95, 90}

// searchMethod documents the search in the report.
const searchMethod = "budgeted bracket search: a closed-loop phase measures the capacity and the service times; " +
	"a queue model (Poisson arrivals into FCFS workers whose service times are resampled from that phase) predicts " +
	"the rate meeting the SLA; the first trial runs just below the prediction (or at --qps). Each trial is an " +
	"open-loop run (Poisson arrivals, latency from the scheduled arrival) and a sequential test with LoadGen's " +
	"early-stopping rule made sequential: it looks after every request and ends as met once P(Binomial(n, 1-P) <= " +
	"violations) <= a per-look level chosen so that the whole trial calls a server whose true share over the threshold is " +
	"exactly 1-P met at most 1% of the time, computed exactly over the paths of the test (0.35% a look for p99: 563 " +
	"requests with none over, 781 with one; LoadGen's one-look 1% applied after every request would be wrong 2.7% " +
	"of the time). Once more requests are over than it allows (4 for a p99 trial sized by its verdict; as many as " +
	"LoadGen allows in a trial its shortest duration makes longer) met is out of reach, and the trial ends missed as " +
	"soon as a mixture of likelihood ratios (shares over the threshold 1.25, 1.56, ... times the allowed one, equally " +
	"weighted) reaches 100: a nonnegative supermartingale while the SLA holds, so by Ville's inequality a server " +
	"within it is called missed at most 1% of the time however long the trial and however often it looks, and a " +
	"queue that builds up late in a trial is proven missed a few requests later; fewer than that many over never " +
	"prove a miss (one stall puts the requests queued behind it over). A trial neither met nor missed goes on for " +
	"at most as many requests again as it had when met went out of reach, then ends undecided, as it does when the " +
	"budget left runs out. " +
	"Unless --qps gives the first rate, a short probe at 1.5 times the predicted rate (at most the capacity) comes " +
	"first: a rate well above the peak misses within a few dozen requests and bounds the bracket from above; then " +
	"the first full trial runs at the rate the model predicts for the stricter share over the threshold at which its " +
	"test proves the SLA met 4 times in 5 (computed exactly: 0.25% for p99, so about p99.75; where exactly 1% is over, " +
	"a trial almost never proves p99). " +
	"The search brackets the peak between the highest rate proven met and the lowest proven missed, bisecting " +
	"between them but stepping at most 15% above the highest met (near the peak the chance of proving the SLA falls " +
	"fast with the rate); an undecided trial steers the search but bounds nothing. A trial the interference monitor " +
	"calls disturbed (its machine sources; the drift test is left out, as latency rising through a trial above the " +
	"peak is what it measures) counts when it proved the SLA met, since a disturbance only slows requests down; " +
	"otherwise it is repeated once, and never counts as a miss. Every trial must fit in the budget left: when the asked " +
	"percentile needs more requests than the budget allows at the first rate, the trials are judged at the highest " +
	"lower percentile that fits (said in the note), and when no trial fits the search stops and says so. " +
	"The bracket's confidence is 1 - 1% per decided trial (Bonferroni over every verdict that could have shaped " +
	"it); the binomial verdicts read violations as independent, and they come in bursts (one stall puts the " +
	"requests queued behind it over), so a verdict near its limit is less certain than it says"

// Search statuses (report.SLASearch.Status).
const (
	searchBracketed   = "bracketed"
	searchLowerOnly   = "lower bound only"
	searchUpperOnly   = "upper bound only"
	searchUndecided   = "undecided"
	searchNotProvable = "not provable in budget"
	// searchMissedAlone: the closed-loop phase, one request at a time,
	// already missed the SLA: no rate can meet it.
	searchMissedAlone = "missed without load"
)

// trialRule is the sequential test a trial of sla applies (see
// stats.SequentialSLA), at SLAConfidence with up to maxV requests over the
// threshold.
func trialRule(sla SLA, maxV int) stats.SequentialSLA {
	r, err := stats.NewSequentialSLA(sla.Percentile, stats.SLAConfidence, maxV)
	if err != nil { // a percentile outside (0, 100), which ParseSLA refuses: Bonferroni over the looks
		looks := make([]int, maxV+1)
		for v := range looks {
			looks[v] = max(stats.QueriesNeeded(v, sla.Percentile, 1-(1-stats.SLAConfidence)/float64(len(looks))), 1)
		}
		return stats.SequentialSLA{Percentile: sla.Percentile, Confidence: stats.SLAConfidence, MaxViolations: maxV, Looks: looks}
	}
	return r
}

// trialSize is how many requests a trial at rate qps gets at least: the
// first look of its sequential test (none over the threshold), or
// minTrial's worth when that is more.
func trialSize(sla SLA, qps float64, minTrial time.Duration) int {
	return max(trialRule(sla, trialMaxViolations).Looks[0], int(math.Round(qps*minTrial.Seconds())), 1)
}

// maxTrialViolations caps the violations a trial's test allows (a long
// trial of a fast model at a low percentile): the looks are computed up
// to it when the test is first made.
const maxTrialViolations = 50

// trialSpec is one trial the search asks for.
type trialSpec struct {
	qps float64
	// sla is the SLA the trial is judged against: its percentile may be
	// lower than the one asked (see fallbackPercentiles).
	sla SLA
	// least is the requests the trial holds at least before it may end
	// as met; most the requests it may hold at all; limit its time.
	least, most int
	limit       time.Duration
	// probe marks the upper probe (see probeShare).
	probe bool
	// rule is the trial's sequential test: up to trialMaxViolations over
	// the threshold, or as many as LoadGen's one-look rule allows in
	// least requests when the trial's shortest duration makes it longer
	// than its verdict needs (a fast model).
	rule stats.SequentialSLA
}

// trialFunc runs one SLA trial.
type trialFunc func(ctx context.Context, spec trialSpec) (report.Trial, error)

// searchConfig is what the search is given.
type searchConfig struct {
	sla    SLA
	budget time.Duration // the whole search
	spent  time.Duration // spent before the first trial (the capacity phase)
	// capacity is the closed-loop rate (requests/s) of the workers.
	capacity float64
	// predict, when set, is the rate the queue model says meets an SLA
	// (0: none); asked for the SLA's percentile and each fallback.
	predict func(SLA) float64
	// start, when more than 0, is the first trial's rate (--qps).
	start     float64
	maxTrials int
	minTrial  time.Duration
	// progress, when set, is told of every trial and the budget left.
	progress func(no int, t report.Trial, left time.Duration)
}

// firstRate is the rate of the first full trial judged against sla: the
// given start, or the rate the queue model predicts for provableSLA(sla),
// or a third of the capacity when the model predicts none.
func (sc searchConfig) firstRate(sla SLA) float64 {
	if sc.start > 0 {
		return sc.start
	}
	if sc.predict != nil {
		if p := sc.predict(provableSLA(sla)); p > 0 {
			return p
		}
	}
	return sc.capacity / 3
}

// provableSLA is the stricter SLA the first full trial aims at: the same
// threshold, at the share over it where the trial's test proves sla met
// with probability firstTrialProof. At the rate where exactly 1% of
// requests are over a p99 threshold the test almost never says met (563
// requests with none over happen 0.35% of the time); a trial proves p99
// four times in five where about a quarter of that share is over, so it
// aims at about p99.75 (stats.SequentialSLA.ProvableShare).
func provableSLA(sla SLA) SLA {
	share := trialRule(sla, trialMaxViolations).ProvableShare(firstTrialProof)
	if !(share > 0) {
		return sla
	}
	return SLA{Threshold: sla.Threshold, Percentile: 100 * (1 - share)}
}

// probeRate is the upper probe's rate for a search whose first full trial
// runs at first: probeShare times the predicted rate, at most the
// capacity; 0 (no probe) when --qps gave the first rate, the model
// predicts nothing, or the probe would not be well above the first trial.
func (sc searchConfig) probeRate(sla SLA, first float64) float64 {
	if sc.start > 0 || sc.predict == nil {
		return 0
	}
	r := probeShare * sc.predict(sla)
	if sc.capacity > 0 {
		r = min(r, sc.capacity)
	}
	if !(r >= first*(1+4*searchTolerance)) || math.IsInf(r, 0) {
		return 0
	}
	return r
}

// judgedSLA is the SLA the trials are judged against, with the first
// trial's rate: the asked one when a trial proving it met at its first
// rate needs at most firstTrialShare of the time left, else the highest
// of fallbackPercentiles below it that does (a lower percentile needs
// fewer requests, and the queue model predicts a higher rate for it);
// false when none does, with the last one tried.
func (sc searchConfig) judgedSLA(left time.Duration) (SLA, float64, bool) {
	var s SLA
	var r float64
	for _, p := range append([]float64{sc.sla.Percentile}, fallbackPercentiles...) {
		if p > sc.sla.Percentile {
			continue
		}
		s = SLA{Threshold: sc.sla.Threshold, Percentile: p}
		r = sc.firstRate(s)
		if r > 0 && float64(trialSize(s, r, sc.minTrial))/r <= firstTrialShare*left.Seconds() {
			return s, r, true
		}
	}
	return s, r, false
}

// specFor plans the trial at rate qps with left of the budget: false when
// the requests that could prove the SLA met do not fit in it.
func specFor(sla SLA, qps float64, left, minTrial time.Duration) (trialSpec, bool) {
	least := trialSize(sla, qps, minTrial)
	rule := trialRule(sla, trialMaxViolations)
	if v := min(verdictAllowed(sla, least), maxTrialViolations); v > trialMaxViolations {
		rule = trialRule(sla, v)
		least = max(least, rule.Looks[0])
	}
	fit := int(math.Floor(qps * left.Seconds()))
	most := min(max(least, rule.Looks[rule.MaxViolations]), fit)
	return trialSpec{qps: qps, sla: sla, least: least, most: most, limit: left, rule: rule}, most >= least
}

// probeSpec plans the upper probe at rate qps: a trial like any other, but
// given at most the time its first look takes, so a rate near the peak,
// where a verdict needs many requests, costs little.
func probeSpec(sla SLA, qps float64, left, minTrial time.Duration) (trialSpec, bool) {
	spec, ok := specFor(sla, qps, left, minTrial)
	spec.probe = true
	spec.limit = min(spec.limit, time.Duration(float64(spec.least)/qps*float64(time.Second)))
	return spec, ok
}

// searchBracket runs the budgeted search (see searchMethod).
func searchBracket(ctx context.Context, sc searchConfig, trial trialFunc) (*report.SLASearch, error) {
	if sc.maxTrials <= 0 {
		sc.maxTrials = DefaultMaxTrials
	}
	res := &report.SLASearch{
		Method: searchMethod, BudgetS: sc.budget.Seconds(), ClosedLoopQPS: sc.capacity, Percentile: sc.sla.Percentile,
	}
	if sc.predict != nil {
		res.PredictedQPS = sc.predict(sc.sla)
	}
	spent := sc.spent
	left := func() time.Duration { return sc.budget - spent }
	defer func() { res.ElapsedS = spent.Seconds() }()
	judged, r, ok := sc.judgedSLA(left())
	if !(r > 0) || math.IsInf(r, 0) {
		return res, fmt.Errorf("SLA search: first rate %v requests/s is not a positive number", r)
	}
	if !ok {
		need := trialSize(judged, r, sc.minTrial)
		res.Status = searchNotProvable
		res.Note = fmt.Sprintf("not provable in budget: proving even p%g met at %.4g requests/s (where the queue model predicts a trial proves it %.0f%% of the time) "+
			"takes %d requests (%s), more than %.0f%% of the %s left; give the search more time (--sla-budget %s)", judged.Percentile, r, 100*firstTrialProof, need,
			units.Duration(float64(need)/r), 100*firstTrialShare, units.Duration(left().Seconds()), roundUp(time.Duration(float64(need)/r/firstTrialShare*float64(time.Second))+sc.spent))
		return res, nil
	}
	res.Percentile = judged.Percentile
	var notes []string
	if judged.Percentile != sc.sla.Percentile {
		r0 := sc.firstRate(sc.sla)
		need := trialSize(sc.sla, r0, sc.minTrial)
		notes = append(notes, fmt.Sprintf("p%g is not provable in budget: a trial proving it met at %.4g requests/s takes %d requests (%s) of the %s left; "+
			"judged at p%g instead (--sla-budget %s judges p%g)", sc.sla.Percentile, r0, need, units.Duration(float64(need)/r0),
			units.Duration(left().Seconds()), judged.Percentile,
			roundUp(time.Duration(float64(need)/r0/firstTrialShare*float64(time.Second))+sc.spent), sc.sla.Percentile))
	}

	// sLo and sHi steer the search (undecided trials move them too); the
	// bracket is made of proven verdicts only.
	sLo, sHi := 0.0, math.Inf(1)
	repeated := map[float64]bool{}
	first := r // the first full trial's rate, after the probe
	probe := sc.probeRate(judged, r)
	if probe > 0 {
		r = probe
	}
	for len(res.Trials) < sc.maxTrials {
		probing := probe > 0 && r == probe
		spec, fits := specFor(judged, r, left(), sc.minTrial)
		if probing {
			spec, fits = probeSpec(judged, r, left(), sc.minTrial)
		}
		if !fits {
			notes = append(notes, fmt.Sprintf("stopped: the next trial, at %.4g requests/s, needs at least %d requests (%s) and %s of the budget is left",
				r, spec.least, units.Duration(float64(spec.least)/r), units.Duration(max(left(), 0).Seconds())))
			break
		}
		t, err := trial(ctx, spec)
		if err != nil {
			res.Trials = append(res.Trials, t)
			return finishBracket(res, notes), err
		}
		spent += time.Duration(t.WallS * float64(time.Second))
		t.TargetQPS, t.Probe = r, spec.probe
		if repeated[r] {
			t.Repeat = true
		}
		res.Trials = append(res.Trials, t)
		if sc.progress != nil {
			sc.progress(len(res.Trials), t, left())
		}
		if !counts(t) && t.Measurement == report.MeasurementDisturbed && !repeated[r] {
			repeated[r] = true // the machine disturbed it: run it again
			continue
		}
		over := t.SLA.ObservedS == nil || *t.SLA.ObservedS > t.SLA.ThresholdS
		switch {
		case counts(t) && t.SLA.Met:
			sLo = max(sLo, r)
		case counts(t):
			sHi = min(sHi, r)
		case over: // undecided, leaning missed
			sHi = min(sHi, r)
		default: // undecided, leaning met
			sLo = max(sLo, r)
		}
		if sLo >= sHi { // a contradiction (the machine changed): widen
			sLo, sHi = 0, math.Inf(1)
			for _, tr := range res.Trials {
				if counts(tr) {
					if tr.SLA.Met {
						sLo = max(sLo, tr.TargetQPS)
					} else {
						sHi = min(sHi, tr.TargetQPS)
					}
				}
			}
			if sLo >= sHi {
				notes = append(notes, "stopped: trials contradict each other (a rate met above one missed): the machine's speed changed during the search")
				break
			}
		}
		next, done := nextRate(sLo, sHi, sc.capacity)
		if probing && first > sLo && first < sHi {
			next, done = first, false // the probe did not meet the SLA: the first full trial
		}
		if done {
			break
		}
		if next == r && repeated[r] {
			break
		}
		r = next
	}
	if len(res.Trials) >= sc.maxTrials {
		notes = append(notes, fmt.Sprintf("stopped after %d trials (--sla-trials)", sc.maxTrials))
	}
	return finishBracket(res, notes), nil
}

// counts reports whether a trial's verdict bounds the bracket: proven met
// (even on a disturbed machine: a disturbance only slows requests down, so
// the rate meets the SLA on a quiet one too), or proven missed on a
// machine the monitor did not call disturbed.
func counts(t report.Trial) bool {
	if t.SLA.Met {
		return true
	}
	return t.SLA.Verdict == string(stats.Missed) && t.Measurement != report.MeasurementDisturbed
}

// nextRate picks the next trial's rate from the steering bounds: bisect
// between them, but at most maxStepUp above the lower one; up by 30% (at
// most to just above capacity, where a trial misses quickly) while nothing
// missed; down by 30% while nothing met. done when they are within
// searchTolerance.
func nextRate(lo, hi, capacity float64) (float64, bool) {
	switch {
	case lo > 0 && !math.IsInf(hi, 1):
		if hi <= lo*(1+searchTolerance) {
			return 0, true
		}
		return min((lo+hi)/2, lo*(1+maxStepUp)), false
	case lo > 0:
		r := lo * 1.3
		if capacity > lo {
			r = min(r, max(1.05*capacity, lo*(1+2*searchTolerance)))
		}
		return r, false
	}
	return hi * 0.7, false
}

// finishBracket sets the bracket from the counted trials: the highest rate
// proven met below the lowest proven missed.
func finishBracket(res *report.SLASearch, notes []string) *report.SLASearch {
	lo, hi := 0.0, math.Inf(1)
	decided := 0
	for _, t := range res.Trials {
		if counts(t) && !t.SLA.Met {
			hi = min(hi, t.TargetQPS)
		}
	}
	for _, t := range res.Trials {
		if !counts(t) {
			continue
		}
		decided++
		if t.SLA.Met && t.TargetQPS < hi {
			lo = max(lo, t.TargetQPS)
		}
	}
	res.PeakQPS, res.Found = lo, lo > 0
	if !math.IsInf(hi, 1) {
		res.UpperQPS = hi
	}
	if decided > 0 {
		res.Confidence = max(1-float64(decided)*(1-stats.SLAConfidence), 0)
	}
	switch {
	case res.Status != "":
	case res.Found && res.UpperQPS > 0:
		res.Status = searchBracketed
	case res.Found:
		res.Status = searchLowerOnly
	case res.UpperQPS > 0:
		res.Status = searchUpperOnly
	default:
		res.Status = searchUndecided
	}
	for _, t := range res.Trials {
		if t.Measurement == report.MeasurementDisturbed {
			res.Disturbed++
		}
	}
	if len(notes) > 0 {
		res.Note = notes[0]
		for _, n := range notes[1:] {
			res.Note += "; " + n
		}
	}
	return res
}

// roundUp rounds a duration up to a whole minute (or 10 seconds under
// one), for advice.
func roundUp(d time.Duration) time.Duration {
	step := time.Minute
	if d < time.Minute {
		step = 10 * time.Second
	}
	return (d + step - 1).Truncate(step)
}

// queueSimArrivals is how many arrivals the queue model simulates per rate.
const queueSimArrivals = 20_000

// predictRate is the highest Poisson arrival rate at which FCFS workers
// whose service times are drawn from service (seconds) keep the SLA's
// percentile of the time in the system (queueing plus service) within its
// threshold; 0 when none does (service alone is too slow). Every rate sees
// the same arrival gaps and service draws (common random numbers), so the
// percentile grows with the rate and a bisection finds the edge.
func predictRate(service []float64, workers int, sla SLA, seed uint64) float64 {
	if len(service) == 0 || workers < 1 {
		return 0
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	gaps := make([]float64, queueSimArrivals)
	draws := make([]float64, queueSimArrivals)
	mean := 0.0
	for _, s := range service {
		mean += s
	}
	mean /= float64(len(service))
	for i := range gaps {
		gaps[i] = rng.ExpFloat64()
		draws[i] = service[rng.IntN(len(service))]
	}
	th, q := sla.Threshold.Seconds(), sla.Percentile/100
	sojourn := make([]float64, queueSimArrivals)
	free := make([]float64, workers)
	meets := func(rate float64) bool {
		clear(free)
		t := 0.0
		for i := range gaps {
			t += gaps[i] / rate
			w := 0 // the worker free first
			for j := range free {
				if free[j] < free[w] {
					w = j
				}
			}
			end := max(t, free[w]) + draws[i]
			free[w] = end
			sojourn[i] = end - t
		}
		slices.Sort(sojourn)
		return stats.QuantileSorted(sojourn, q) <= th
	}
	lo, hi := 0.0, float64(workers)/max(mean, 1e-9) // utilisation 1
	if !meets(hi * 1e-3) {
		return 0
	}
	lo = hi * 1e-3
	for hi-lo > lo*0.005 {
		mid := (lo + hi) / 2
		if meets(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
