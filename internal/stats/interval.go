package stats

import (
	"fmt"
	"math"
)

// DefaultConfidence is the confidence level of the percentile intervals
// Summarize attaches.
const DefaultConfidence = 0.95

// IntervalMethod names how the percentile intervals are computed, for
// reports.
const IntervalMethod = "distribution-free order-statistic interval: the bounds are the l-th and u-th smallest " +
	"samples, with l and u chosen from the binomial distribution of how many samples fall below the true " +
	"percentile, equal-tailed; no assumption about the shape of the latency distribution"

// Interval is a confidence interval for one percentile.
type Interval struct {
	// Percentile, e.g. 99 for p99.
	Percentile float64 `json:"percentile"`
	// Estimate is the interpolated sample percentile (the one in Summary).
	Estimate float64 `json:"estimate"`
	// Lower and Upper bound the true percentile at Confidence; each is
	// absent when the samples are too few to bound that side.
	Lower      *float64 `json:"lower,omitempty"`
	Upper      *float64 `json:"upper,omitempty"`
	Confidence float64  `json:"confidence"`
	// Sufficient is false when the samples cannot bound the percentile on
	// both sides at Confidence: the estimate is then not a measurement
	// (p99.9 from 100 runs is the largest sample or two, interpolated).
	Sufficient bool `json:"sufficient"`
	// MinSamples is the fewest samples that bound this percentile on both
	// sides at Confidence.
	MinSamples int `json:"min_samples"`
}

// RelWidth is the interval's width relative to its estimate, or +Inf when
// the interval is not bounded on both sides.
func (iv Interval) RelWidth() float64 {
	if iv.Lower == nil || iv.Upper == nil || iv.Estimate == 0 {
		return math.Inf(1)
	}
	return (*iv.Upper - *iv.Lower) / math.Abs(iv.Estimate)
}

// String formats the interval in the samples' unit.
func (iv Interval) String() string {
	if !iv.Sufficient {
		return fmt.Sprintf("p%s %g: insufficient runs (%d needed)", fmtPct(iv.Percentile), iv.Estimate, iv.MinSamples)
	}
	return fmt.Sprintf("p%s %g [%g, %g] at %g%%", fmtPct(iv.Percentile), iv.Estimate, *iv.Lower, *iv.Upper, 100*iv.Confidence)
}

func fmtPct(p float64) string { return fmt.Sprint(p) }

// QuantileInterval returns the confidence interval at level conf (0 < conf
// < 1) for the q-quantile (0 < q < 1) of sorted samples; see
// IntervalMethod. With B the number of samples below the true quantile, B
// follows Binomial(n, q); the interval [X(l), X(u)] (1-based order
// statistics) covers it with probability P(l <= B < u). l is the largest
// rank with P(B < l) <= (1-conf)/2, u the smallest with P(B >= u) <=
// (1-conf)/2. A side whose rank falls outside 1..n is left unbounded.
func QuantileInterval(sorted []float64, q, conf float64) Interval {
	n := len(sorted)
	iv := Interval{Percentile: 100 * q, Confidence: conf, MinSamples: MinSamples(q, conf)}
	if n == 0 || !(q > 0 && q < 1) || !(conf > 0 && conf < 1) {
		iv.Estimate = math.NaN()
		return iv
	}
	iv.Estimate = QuantileSorted(sorted, q)
	l, u := orderRanks(n, q, conf)
	if l >= 1 {
		v := sorted[l-1]
		iv.Lower = &v
	}
	if u <= n {
		v := sorted[u-1]
		iv.Upper = &v
	}
	iv.Sufficient = iv.Lower != nil && iv.Upper != nil
	return iv
}

// orderRanks returns the 1-based ranks l and u of the equal-tailed
// interval; l may be 0 and u may be n+1 (that side is unbounded).
func orderRanks(n int, q, conf float64) (l, u int) {
	alpha := (1 - conf) / 2
	// cdf[k] = P(B <= k), accumulated from the pmf in log space.
	logq, log1q := math.Log(q), math.Log1p(-q)
	lg := func(k int) float64 { v, _ := math.Lgamma(float64(k) + 1); return v }
	lgn := lg(n)
	cum := 0.0
	l, u = 0, n+1
	for k := 0; k <= n; k++ {
		cum += math.Exp(lgn - lg(k) - lg(n-k) + float64(k)*logq + float64(n-k)*log1q)
		// P(B < k+1) = cum: rank k+1 qualifies as l when cum <= alpha.
		if cum <= alpha {
			l = k + 1
		}
		// P(B >= k+1) = 1 - cum: rank k+1 is u once that is <= alpha.
		if 1-cum <= alpha {
			u = k + 1
			break
		}
	}
	return l, u
}

// MinSamples is the fewest samples whose equal-tailed order-statistic
// interval at conf bounds the q-quantile on both sides: both q^n and
// (1-q)^n must be at most (1-conf)/2.
func MinSamples(q, conf float64) int {
	if !(q > 0 && q < 1) || !(conf > 0 && conf < 1) {
		return 0
	}
	alpha := (1 - conf) / 2
	p := math.Max(q, 1-q)
	n := int(math.Ceil(math.Log(alpha) / math.Log(p)))
	// Guard the floating-point edge: step to the exact smallest n.
	for n > 1 && math.Pow(p, float64(n-1)) <= alpha {
		n--
	}
	for math.Pow(p, float64(n)) > alpha {
		n++
	}
	return n
}

// BinomialCDF is P(B <= k) for B ~ Binomial(n, p).
func BinomialCDF(k, n int, p float64) float64 {
	switch {
	case k < 0:
		return 0
	case k >= n:
		return 1
	case p <= 0:
		return 1
	case p >= 1:
		return 0
	}
	lg := func(k int) float64 { v, _ := math.Lgamma(float64(k) + 1); return v }
	lgn, lp, l1p := lg(n), math.Log(p), math.Log1p(-p)
	s := 0.0
	for i := 0; i <= k; i++ {
		s += math.Exp(lgn - lg(i) - lg(n-i) + float64(i)*lp + float64(n-i)*l1p)
	}
	return math.Min(s, 1)
}

// Verdict is the outcome of an SLA test with early stopping.
type Verdict string

// Verdicts of SLAVerdict.
const (
	// Met: so few requests violated the threshold that, were the true
	// share of violations as high as the SLA allows, seeing this few would
	// happen with probability at most 1-conf.
	Met Verdict = "met"
	// Missed: so many violated that, were the true share within the SLA,
	// seeing this many would happen with probability at most 1-conf.
	Missed Verdict = "missed"
	// Insufficient: neither holds at the confidence level; more requests
	// are needed to decide.
	Insufficient Verdict = "insufficient requests"
)

// SLAConfidence is the confidence of SLA verdicts, as in MLPerf LoadGen's
// early stopping.
const SLAConfidence = 0.99

// EarlyStoppingMethod describes SLAVerdict for reports.
const EarlyStoppingMethod = "early stopping as in MLPerf LoadGen: with n requests of which v exceed the threshold " +
	"(failures count), the SLA at percentile P is met when P(Binomial(n, 1-P) <= v) <= 1-confidence, missed when " +
	"P(Binomial(n, 1-P) >= v) <= 1-confidence, and undecided otherwise"

// SLAVerdict decides whether n requests with v violations meet an SLA at
// percentile (e.g. 99) with confidence conf; see EarlyStoppingMethod.
// needed is the fewest requests that would decide "met" with v violations
// (LoadGen's early-stopping query count); 0 when that is not the question
// (the verdict is missed, or met already with n).
func SLAVerdict(n, v int, percentile, conf float64) (verdict Verdict, needed int) {
	tail := (100 - percentile) / 100
	alpha := 1 - conf
	if n <= 0 || !(tail > 0 && tail < 1) {
		return Insufficient, QueriesNeeded(max(v, 0), percentile, conf)
	}
	switch {
	case BinomialCDF(v, n, tail) <= alpha:
		return Met, 0
	case v > 0 && 1-BinomialCDF(v-1, n, tail) <= alpha:
		return Missed, 0
	}
	if float64(v) >= tail*float64(n) {
		// At the observed rate more requests lead towards "missed", not "met".
		return Insufficient, 0
	}
	return Insufficient, QueriesNeeded(v, percentile, conf)
}

// QueriesNeeded is the fewest requests n such that v violations among them
// show, at confidence conf, that the share of violations is below
// 1-percentile/100: the smallest n with P(Binomial(n, 1-P) <= v) <=
// 1-conf. For p99 at 99% with no violations it is 459, LoadGen's figure.
// It returns 0 when the inputs are out of range.
func QueriesNeeded(v int, percentile, conf float64) int {
	tail := (100 - percentile) / 100
	alpha := 1 - conf
	if v < 0 || !(tail > 0 && tail < 1) || !(alpha > 0 && alpha < 1) {
		return 0
	}
	ok := func(n int) bool { return BinomialCDF(v, n, tail) <= alpha }
	lo, hi := v, max(v+1, 1) // ok(lo) is false: n = v gives CDF 1
	for !ok(hi) {
		if hi > 1<<40 {
			return 0
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
