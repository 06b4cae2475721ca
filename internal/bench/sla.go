package bench

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
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

// trialPhase is one trial of the SLA search: a sequential test at
// spec.qps (spec.rule). It issues at least spec.least requests and then
// stops issuing once the test says met (requests already queued then
// still run and count); it stops at once when the test says missed, which
// needs more than trialMaxViolations requests over the threshold (one
// stall puts the few requests queued behind it over: fewer never prove a
// miss). Once "met" is out of reach it goes on for at most as many
// requests again as it had done by then, so that a rate above the peak,
// where violations start late (once a queue has built up) and then come
// one after another, is proven missed rather than left undecided, while a
// rate near the peak, where a verdict either way needs many requests,
// costs a bounded amount. It holds at most spec.most requests and issues
// none after spec.limit.
func trialPhase(spec trialSpec, seed uint64) phase {
	rule, least := spec.rule, spec.least
	var outOfReach atomic.Int64 // requests done when met went out of reach
	return phase{
		scenario: Server, workers: 1, requests: max(spec.most, 1), duration: spec.limit, qps: spec.qps, seed: seed,
		threshold: spec.sla.Threshold,
		decide: func(done, violations int) decision {
			switch {
			case done >= least && rule.Met(done, violations):
				return decideEnough
			case rule.Missed(done, violations):
				return decideStop
			case violations > rule.MaxViolations:
				outOfReach.CompareAndSwap(0, int64(done))
				if int64(done) >= 2*outOfReach.Load() {
					return decideStop // undecided: a rate near the peak
				}
			}
			return decideContinue
		},
	}
}

// trialResult is the report of one SLA trial at rate qps, judged against
// sla. The trial passes on the early-stopping verdict, which its size
// allows with up to trialAllowance requests over the threshold, and only
// if it ran to its end. Its percentile gets an order-statistic interval.
func trialResult(sla SLA, rule stats.SequentialSLA, qps float64, res *phaseResult) report.Trial {
	lat := res.latencies()
	s := stats.Summarize(lat)
	t := report.Trial{
		TargetQPS: qps, Planned: res.planned, Completed: len(res.records), WallS: res.wall.Seconds(),
		P50S: s.P50, P99S: s.P99, SLA: sla.check(lat, res.errors()), Aborted: res.aborted,
	}
	if len(lat) > 0 {
		sorted := slices.Clone(lat)
		slices.Sort(sorted)
		iv := stats.QuantileInterval(sorted, sla.Percentile/100, intervalConfidence)
		t.Interval = &iv
	}
	judgeSequential(&t.SLA, rule)
	t.SLA.Met = t.SLA.Verdict == string(stats.Met) && !res.aborted
	if t.WallS > 0 {
		t.AchievedQPS = float64(t.Completed) / t.WallS
	}
	return t
}

// judgeSequential sets a trial's verdict by the sequential test it ran
// under: met only when its requests reached the look for its violations,
// missed only when the test's missed level says so; a count LoadGen's
// one-look rule calls met or missed but the sequential test does not is
// insufficient (with the requests a met look needs).
func judgeSequential(r *report.SLAResult, rule stats.SequentialSLA) {
	switch {
	case rule.Missed(r.Requests, r.Violations):
		r.Verdict, r.RequestsNeeded = string(stats.Missed), 0
	case r.Verdict == string(stats.Missed): // the one-look test's, not the sequential one's
		r.Verdict, r.RequestsNeeded = string(stats.Insufficient), 0
	case r.Verdict != string(stats.Met) || rule.Met(r.Requests, r.Violations):
	default:
		r.Verdict, r.RequestsNeeded = string(stats.Insufficient), 0
		if r.Violations < len(rule.Looks) {
			r.RequestsNeeded = rule.Looks[r.Violations]
		}
	}
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
