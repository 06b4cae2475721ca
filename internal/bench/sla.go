package bench

import (
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

// trialPhase is one trial of the SLA search: a sequential test at
// spec.qps. It issues at least spec.least requests and then stops once the
// early-stopping verdict over the requests so far is met (requests already
// queued then still run and count); it stops at once when more requests
// were over the threshold than spec.most requests could prove the SLA
// with (trialMaxViolations for a trial sized by the p99 count; more for a
// long trial at a high rate), as no trial size up to its most would then
// prove it. It holds at most spec.most
// requests (those that prove the SLA with trialMaxViolations over, or
// fewer when the budget left is shorter) and issues none after
// spec.limit. It does not stop early on a
// binomial "missed" test: violations are not independent (one stall puts
// every request queued behind it over), and a test that treats them as
// independent ended trials after one stall (3 of the first 13 requests).
func trialPhase(spec trialSpec, seed uint64) phase {
	rule, least := trialRule(spec.sla), spec.least
	return phase{
		scenario: Server, workers: 1, requests: max(spec.most, 1), duration: spec.limit, qps: spec.qps, seed: seed,
		threshold: spec.sla.Threshold, budget: max(rule.MostViolations(spec.most), 1),
		decide: func(done, violations int) decision {
			if done >= least && rule.Met(done, violations) {
				return decideEnough
			}
			return decideContinue
		},
	}
}

// trialResult is the report of one SLA trial at rate qps, judged against
// sla. The trial passes on the early-stopping verdict, which its size
// allows with up to trialAllowance requests over the threshold, and only
// if it ran to its end. Its percentile gets an order-statistic interval.
func trialResult(sla SLA, qps float64, res *phaseResult) report.Trial {
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
	judgeSequential(&t.SLA, trialRule(sla))
	t.SLA.Met = t.SLA.Verdict == string(stats.Met) && !res.aborted
	if t.WallS > 0 {
		t.AchievedQPS = float64(t.Completed) / t.WallS
	}
	return t
}

// judgeSequential sets a trial's "met" verdict by the sequential test it
// ran under: met only when its requests reached the look for its
// violations; a count LoadGen's one-look rule calls met but the sequential
// test does not is insufficient, with the requests its look needs.
func judgeSequential(r *report.SLAResult, rule stats.SequentialSLA) {
	if r.Verdict != string(stats.Met) || rule.Met(r.Requests, r.Violations) {
		return
	}
	r.Verdict, r.RequestsNeeded = string(stats.Insufficient), 0
	if r.Violations < len(rule.Looks) {
		r.RequestsNeeded = rule.Looks[r.Violations]
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
