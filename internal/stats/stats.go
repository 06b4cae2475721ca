// Package stats summarizes latency samples: percentiles, mean, standard
// deviation. Percentiles interpolate linearly between the two closest ranks
// (the "type 7" estimator of R and NumPy's default), so p50 of an even count
// is the mean of the two middle samples.
package stats

import (
	"math"
	"slices"
)

// Summary describes a set of samples, in the samples' unit.
type Summary struct {
	Count int     `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99_9"`
	Max   float64 `json:"max"`
	Sum   float64 `json:"sum"`
	// Intervals holds a DefaultConfidence interval for each of P50, P90,
	// P95, P99 and P999, in that order (see IntervalMethod); an interval
	// marked not sufficient means the samples cannot support that
	// percentile.
	Intervals []Interval `json:"intervals,omitempty"`
}

// Percentiles are the percentiles a Summary reports, in its order.
var Percentiles = []float64{50, 90, 95, 99, 99.9}

// Interval returns the summary's interval for percentile p (e.g. 99.9),
// and false when it has none.
func (s Summary) Interval(p float64) (Interval, bool) {
	for _, iv := range s.Intervals {
		if iv.Percentile == p {
			return iv, true
		}
	}
	return Interval{}, false
}

// Supported reports whether the samples support percentile p: true when
// the summary has no interval for it (an old report), else the interval's
// Sufficient.
func (s Summary) Supported(p float64) bool {
	iv, ok := s.Interval(p)
	return !ok || iv.Sufficient
}

// Summarize returns the summary of xs. It does not modify xs. An empty xs
// gives a zero Summary.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(len(s))
	var ss float64
	for _, x := range s {
		d := x - mean
		ss += d * d
	}
	std := 0.0
	if len(s) > 1 {
		std = math.Sqrt(ss / float64(len(s)-1))
	}
	ivs := make([]Interval, len(Percentiles))
	for i, p := range Percentiles {
		ivs[i] = QuantileInterval(s, p/100, DefaultConfidence)
		ivs[i].Percentile = p // exact, not 100*(p/100)
	}
	return Summary{
		Intervals: ivs,
		Count:     len(s),
		Min:       s[0],
		Mean:      mean,
		Std:       std,
		P50:       QuantileSorted(s, 0.50),
		P90:       QuantileSorted(s, 0.90),
		P95:       QuantileSorted(s, 0.95),
		P99:       QuantileSorted(s, 0.99),
		P999:      QuantileSorted(s, 0.999),
		Max:       s[len(s)-1],
		Sum:       sum,
	}
}

// QuantileSorted returns the q-quantile (0 <= q <= 1) of sorted samples,
// interpolating linearly between closest ranks. It returns NaN for no samples.
func QuantileSorted(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if q <= 0 {
		return sorted[0]
	}
	if q >= 1 {
		return sorted[n-1]
	}
	h := q * float64(n-1)
	lo := int(math.Floor(h))
	hi := min(lo+1, n-1)
	return sorted[lo] + (h-float64(lo))*(sorted[hi]-sorted[lo])
}

// Quantile is QuantileSorted for unsorted samples (it sorts a copy).
func Quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return QuantileSorted(s, q)
}
