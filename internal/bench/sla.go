package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// SLA is a latency service-level agreement: Percentile percent of the
// requests finish within Threshold.
type SLA struct {
	Threshold  time.Duration
	Percentile float64 // in (0, 100), e.g. 99
}

// DefaultSLAPercentile is the percentile of an SLA given without one.
const DefaultSLAPercentile = 99

// ParseSLA reads an SLA: a duration, optionally followed by @p and
// a percentile: 20ms (p99), 20ms@p95, 1.5s@p99.9.
func ParseSLA(s string) (SLA, error) {
	d, p, hasP := strings.Cut(strings.TrimSpace(s), "@")
	th, err := time.ParseDuration(strings.TrimSpace(d))
	if err != nil || th <= 0 {
		return SLA{}, invalid("{SLA} %q: %q is not a positive duration (for example 20ms, or 20ms@p95 for a percentile other than p99)", s, d)
	}
	sla := SLA{Threshold: th, Percentile: DefaultSLAPercentile}
	if hasP {
		v := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(p)), "p")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f < 100) {
			return SLA{}, invalid("{SLA} %q: the percentile %q must be p followed by a number between 0 and 100, such as p99 or p99.9", s, p)
		}
		sla.Percentile = f
	}
	return sla, nil
}

// String formats the SLA as ParseSLA reads it.
func (s SLA) String() string {
	return s.Threshold.String() + "@p" + strconv.FormatFloat(s.Percentile, 'f', -1, 64)
}

// allowed is how many of n requests may violate the SLA while the
// nearest-rank percentile (the ⌈P·n/100⌉-th smallest latency) still meets
// the threshold.
func (s SLA) allowed(n int) int {
	if n <= 0 {
		return 0
	}
	rank := int(math.Ceil(s.Percentile / 100 * float64(n)))
	return n - max(rank, 1)
}

// check evaluates latencies (seconds, successful requests) and failed
// requests against the SLA. Failed requests violate it: they count as
// infinitely slow.
func (s SLA) check(latencies []float64, failed int) report.SLAResult {
	th := s.Threshold.Seconds()
	n := len(latencies) + failed
	r := report.SLAResult{ThresholdS: th, Percentile: s.Percentile, Requests: n, Violations: failed}
	for _, l := range latencies {
		if l > th {
			r.Violations++
		}
	}
	if n == 0 {
		return r
	}
	r.Compliance = 1 - float64(r.Violations)/float64(n)
	r.Met = r.Violations <= s.allowed(n)
	v, need := stats.SLAVerdict(n, r.Violations, s.Percentile, stats.SLAConfidence)
	r.Verdict, r.Confidence, r.RequestsNeeded = string(v), stats.SLAConfidence, need
	rank := max(int(math.Ceil(s.Percentile/100*float64(n))), 1)
	if rank <= len(latencies) {
		sorted := slices.Clone(latencies)
		slices.Sort(sorted)
		v := sorted[rank-1]
		r.ObservedS = &v
	}
	return r
}

// Search bounds.
const (
	// searchTolerance ends the bisection when the failing rate is within
	// this fraction above the passing one.
	searchTolerance = 0.05
	// searchMaxSteps caps the ramp: up or down by at most 2^searchMaxSteps.
	searchMaxSteps = 12
	// DefaultMaxTrials caps the trials of one search (a failing rate takes
	// two).
	DefaultMaxTrials = 20
	// trialAllowance is how many requests over the threshold a trial sized
	// by trialSize may see and still prove the SLA: one, so a single stray
	// slow request does not fail a rate the machine sustains.
	trialAllowance = 1
	// trialMaxViolations is the most requests over the threshold a trial
	// may see and still go on: a trial that cannot prove the SLA at its
	// planned size after a stray stall or two is extended, up to the size
	// that proves it with this many over (QueriesNeeded), rather than
	// failed.
	trialMaxViolations = 4
)

// searchMethod documents the search in the report.
const searchMethod = "exponential ramp then bisection: start at the given --qps (or half the rate the workers " +
	"sustain by the warm-up median); double the rate after each passing trial until one fails (halve it after each " +
	"failing one until one passes); then bisect between the highest passing and the lowest failing rate until they " +
	"are within 5%. Each trial is an open-loop run (Poisson arrivals, latency from the scheduled arrival) and a " +
	"sequential test: it holds at least as many requests as its percentile needs for a verdict at 99% confidence with " +
	"one request over the threshold (LoadGen's early-stopping count: 662 for p99, 130 for p95), or --trial-duration's " +
	"worth when more, and then ends once the early-stopping verdict over its requests so far is met (requests already " +
	"queued still count); a stray stall that puts more requests over the threshold extends it, up to the size that " +
	"proves the SLA with 4 over, instead of failing it; it ends as failed once more than 4 requests are over (violations " +
	"come in bursts: one stall puts every request queued behind it over, so a few early ones are not read as a miss). " +
	"A rate fails only when two trials at it fail: a failing trial " +
	"is repeated once (new arrival seed) before the search moves below it; no rate is tried whose trial would last " +
	"more than 10 minutes; the peak is confirmed by a second passing trial, and a failure at or below a passing " +
	"rate disowns that pass. The peak lies between the highest passing and the lowest failing rate"

// maxTrialTime bounds one trial of the search: LoadGen's shortest run.
// A rate whose sized trial would last longer is not tried.
const maxTrialTime = 10 * time.Minute

// searchFloor is the lowest rate whose sized trial fits in maxTrialTime.
func searchFloor(sla SLA) float64 {
	return float64(trialSize(sla, 0, 0)) / maxTrialTime.Seconds()
}

// trialSize is how many requests a trial at rate qps gets: enough for
// the early-stopping verdict at SLAConfidence with trialAllowance
// violations, or trialDuration's worth when that is more.
func trialSize(sla SLA, qps float64, trialDuration time.Duration) int {
	n := stats.QueriesNeeded(trialAllowance, sla.Percentile, stats.SLAConfidence)
	return max(n, int(math.Round(qps*trialDuration.Seconds())), 1)
}

// trialPhase is one trial of the SLA search at rate qps: a sequential
// test. It issues at least trialSize requests and then stops once the
// early-stopping verdict over the requests so far is met (requests already
// queued then still run and count); it stops at once when more than
// trialMaxViolations requests were over the threshold, as no trial size up
// to its most would then prove the SLA. It holds at most the requests that
// prove the SLA with trialMaxViolations over. It does not stop early on a
// binomial "missed" test: violations are not independent (one stall puts
// every request queued behind it over), and a test that treats them as
// independent ended trials after one stall (3 of the first 13 requests).
func trialPhase(sla SLA, qps float64, trialDuration time.Duration, seed uint64) phase {
	least := trialSize(sla, qps, trialDuration)
	tail := (100 - sla.Percentile) / 100
	most := max(least, stats.QueriesNeeded(trialMaxViolations, sla.Percentile, stats.SLAConfidence))
	return phase{
		scenario: Server, workers: 1, requests: most, qps: qps, seed: seed,
		threshold: sla.Threshold, budget: trialMaxViolations,
		decide: func(done, violations int) decision {
			if done >= least && stats.BinomialCDF(violations, done, tail) <= 1-stats.SLAConfidence {
				return decideEnough
			}
			return decideContinue
		},
	}
}

// trialResult is the report of one SLA trial at rate qps. The trial
// passes on the early-stopping verdict, which its size allows with up to
// trialAllowance requests over the threshold, and only if it ran to its
// end.
func trialResult(sla SLA, qps float64, res *phaseResult) report.Trial {
	lat := res.latencies()
	s := stats.Summarize(lat)
	t := report.Trial{
		TargetQPS: qps, Planned: res.planned, Completed: len(res.records), WallS: res.wall.Seconds(),
		P50S: s.P50, P99S: s.P99, SLA: sla.check(lat, res.errors()), Aborted: res.aborted,
	}
	t.SLA.Met = t.SLA.Verdict == string(stats.Met) && !res.aborted
	if t.WallS > 0 {
		t.AchievedQPS = float64(t.Completed) / t.WallS
	}
	return t
}

// verdictAllowed is the most violations among n requests that still prove
// the SLA met at SLAConfidence; -1 when none can.
func verdictAllowed(sla SLA, n int) int {
	k := -1
	for v := 0; v <= n; v++ {
		if vv, _ := stats.SLAVerdict(n, v, sla.Percentile, stats.SLAConfidence); vv != stats.Met {
			break
		}
		k = v
	}
	return k
}

// trialFunc runs one SLA trial at a target rate.
type trialFunc func(ctx context.Context, qps float64) (report.Trial, error)

// searchPeak finds the highest rate whose trial meets the SLA, starting at
// start, with at most maxTrials trials (see searchMethod).
//
// floor is the lowest rate worth a trial (see searchFloor); 0 for none.
func searchPeak(ctx context.Context, start, floor float64, maxTrials int, trial trialFunc) (*report.SLASearch, error) {
	if !(start > 0) {
		return nil, fmt.Errorf("SLA search: start rate %v is not positive", start)
	}
	if maxTrials <= 0 {
		maxTrials = DefaultMaxTrials
	}
	res := &report.SLASearch{Method: searchMethod}
	lo, hi := 0.0, math.Inf(1) // highest passing, lowest failing
	var passed []float64       // rates that passed and no failure at or below has disowned
	confirmed := map[float64]bool{}
	r := start
	for len(res.Trials) < maxTrials {
		t, err := trial(ctx, r)
		if err != nil {
			return res, err
		}
		t.Repeat = r == lo // confirming the peak
		res.Trials = append(res.Trials, t)
		if !t.SLA.Met && len(res.Trials) < maxTrials {
			// Noise fails single trials: repeat once before moving down.
			rt, err := trial(ctx, r)
			if err != nil {
				return res, err
			}
			rt.Repeat = true
			res.Trials = append(res.Trials, rt)
			t = rt
		}
		if t.SLA.Met {
			if r == lo {
				confirmed[r] = true
			}
			lo = max(lo, r)
			passed = append(passed, r)
		} else {
			// A rate fails: no rate at or above it passes (a pass there
			// was luck, such as a trial too short for the queue to build
			// at full load).
			hi = min(hi, r)
			passed = slices.DeleteFunc(passed, func(p float64) bool { return p >= r })
			lo = 0
			for _, p := range passed {
				lo = max(lo, p)
			}
		}
		switch {
		case math.IsInf(hi, 1): // still ramping up
			if r >= start*math.Exp2(searchMaxSteps) {
				res.Note = fmt.Sprintf("every trial up to %.4g requests/s met the SLA; the peak is higher", r)
				return finish(res, lo, hi), nil
			}
			r *= 2
		case lo == 0: // ramping down
			if r <= start/math.Exp2(searchMaxSteps) {
				res.Note = fmt.Sprintf("no trial down to %.4g requests/s met the SLA: a single request takes longer than it allows", r)
				return finish(res, lo, hi), nil
			}
			if r/2 < floor {
				res.Note = fmt.Sprintf("no trial down to %.4g requests/s met the SLA, and a trial at half that rate would last longer than %s "+
					"to hold the requests its verdict needs: at this latency spread (or machine load) the SLA cannot be met", r, maxTrialTime)
				return finish(res, lo, hi), nil
			}
			r /= 2
		default:
			if hi <= lo*(1+searchTolerance) {
				if confirmed[lo] {
					return finish(res, lo, hi), nil
				}
				// Confirm the peak with a second trial before reporting it.
				r = lo
				continue
			}
			r = (lo + hi) / 2
		}
	}
	res.Note = fmt.Sprintf("stopped after %d trials, before the passing and failing rates came within %.0f%%", maxTrials, 100*searchTolerance)
	if lo > 0 && !confirmed[lo] {
		res.Note += "; the peak passed once and was not confirmed by a second trial (allow more with --sla-trials)"
	}
	return finish(res, lo, hi), nil
}

func finish(res *report.SLASearch, lo, hi float64) *report.SLASearch {
	res.PeakQPS = lo
	res.Found = lo > 0
	if !math.IsInf(hi, 1) {
		res.UpperQPS = hi
	}
	return res
}
