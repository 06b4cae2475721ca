package history

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/ortel-dev/ortel/internal/configerr"
)

// Change-point detection: the E-divisive means method (Matteson and James,
// 2014, as MongoDB's signal-processing library computes it) splits a series
// where the energy distance between the two sides is largest, and a
// Student's t-test decides whether a split is real, as Apache Otava
// (formerly Hunter) does: a first, lenient pass of E-divisive over
// overlapping windows finds candidates, then the weakest candidate is
// removed again and again until every one left passes the test at the
// wanted p-value and moves the series by at least the smallest change of
// interest. See docs/ARCHITECTURE.md ("History").
//
// The series is analysed in logarithms: a change is a ratio (10% slower),
// the same wherever the level is, and a machine whose noise scales with the
// latency (a shared VM) gets one noise level across the series.

// Detection says how change points are found. Zero fields take the
// defaults.
type Detection struct {
	// PValue is the significance a change point must reach: the chance that
	// noise alone would split the series as much (default 0.001).
	PValue float64
	// MinChange is the smallest change reported, relative: 0.05 is 5%
	// (default DefaultMinChange).
	MinChange float64
	// MinRuns is the fewest runs on each side of a change point (default
	// DefaultMinRuns).
	MinRuns int
	// Window is how many runs one E-divisive pass looks at; passes overlap
	// by half a window (default 50).
	Window int
	// Confidence of each change's interval (default 0.95).
	Confidence float64
}

// Defaults of Detection.
const (
	DefaultPValue     = 0.001
	DefaultMinChange  = 0.05
	DefaultMinRuns    = 3
	DefaultWindow     = 50
	DefaultConfidence = 0.95
)

func (d Detection) withDefaults() Detection {
	if d.PValue == 0 {
		d.PValue = DefaultPValue
	}
	if d.MinChange == 0 {
		d.MinChange = DefaultMinChange
	}
	if d.MinRuns == 0 {
		d.MinRuns = DefaultMinRuns
	}
	if d.Window == 0 {
		d.Window = DefaultWindow
	}
	if d.Confidence == 0 {
		d.Confidence = DefaultConfidence
	}
	return d
}

func (d Detection) validate() error {
	d = d.withDefaults()
	switch {
	case !(d.PValue > 0 && d.PValue < 1):
		return configerr.New("history", "{Detection.PValue} %g: the significance level must be a probability between 0 and 1, such as 0.001", d.PValue)
	case !(d.MinChange >= 0 && d.MinChange < 10):
		return configerr.New("history", "{Detection.MinChange} %g: the smallest change must be a fraction, 0 or more, such as 0.05 for 5%%", d.MinChange)
	case d.MinRuns < 1:
		return configerr.New("history", "{Detection.MinRuns} %d: the fewest runs on each side of a change must be 1 or more", d.MinRuns)
	case d.Window < 2*d.MinRuns+1:
		return configerr.New("history", "the window of %d runs cannot hold {Detection.MinRuns} %d on each side of a change", d.Window, d.MinRuns)
	case !(d.Confidence > 0 && d.Confidence < 1):
		return configerr.New("history", "{Detection.Confidence} %g: the confidence must be a probability between 0 and 1, such as 0.95", d.Confidence)
	}
	return nil
}

// ChangePoint is a lasting change of a series' level.
type ChangePoint struct {
	// Index is the first point after the change.
	Index int `json:"index"`
	// BeforeRuns and AfterRuns are how many points the level before and
	// after is computed from (up to the neighbouring change points).
	BeforeRuns int `json:"before_runs"`
	AfterRuns  int `json:"after_runs"`
	// Before and After are the levels on each side: geometric means, in
	// the series' unit.
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	// Change is After/Before - 1; Lower and Upper bound it at Confidence.
	Change     float64 `json:"change"`
	Lower      float64 `json:"lower"`
	Upper      float64 `json:"upper"`
	Confidence float64 `json:"confidence"`
	// PValue is the t-test's: how likely noise alone splits the series as
	// much.
	PValue float64 `json:"p_value"`
}

// Detect finds the change points of values, oldest first. Every value must
// be positive and finite (latencies, rates, bytes).
func Detect(values []float64, d Detection) ([]ChangePoint, error) {
	if err := d.validate(); err != nil {
		return nil, err
	}
	d = d.withDefaults()
	y := make([]float64, len(values))
	for i, v := range values {
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("point %d of the series is %g: change points need positive values", i, v)
		}
		y[i] = math.Log(v)
	}
	if len(y) < 2*d.MinRuns {
		return nil, nil
	}
	// The first pass is lenient, as Otava's: candidates that miss the
	// wanted p-value now may pass once their neighbours are merged away.
	first := d.PValue * 10
	if d.PValue >= 0.05 {
		first = min(d.PValue*2, d.PValue+(1-d.PValue)/2)
	}
	cands := split(y, d.Window, d.MinRuns, first)
	kept := merge(y, cands, d)
	out := make([]ChangePoint, len(kept))
	bounds := append(append([]int{0}, kept...), len(y))
	for i, idx := range kept {
		tt := tTest(y[bounds[i]:idx], y[idx:bounds[i+2]], d.Confidence)
		out[i] = ChangePoint{
			Index: idx, BeforeRuns: idx - bounds[i], AfterRuns: bounds[i+2] - idx,
			Before: math.Exp(tt.mean1), After: math.Exp(tt.mean2),
			Change: math.Exp(tt.diff) - 1, Lower: math.Exp(tt.lo) - 1, Upper: math.Exp(tt.hi) - 1,
			Confidence: d.Confidence, PValue: tt.p,
		}
	}
	return out, nil
}

// split runs E-divisive over overlapping windows of y and returns the
// candidate change points, sorted.
func split(y []float64, window, minRuns int, p float64) []int {
	seen := map[int]bool{}
	step := max(window/2, 1)
	for start := 0; start < len(y); {
		end := min(start+window, len(y))
		last := 0
		for _, c := range eDivisive(y[start:end], minRuns, p) {
			seen[start+c] = true
			last = max(last, start+c)
		}
		start = max(last, start+step)
	}
	out := slices.Sorted(maps.Keys(seen))
	return out
}

// eDivisive splits x recursively: each step takes the split with the
// largest energy statistic among all current segments, and stops at the
// first one the t-test does not find significant at p.
func eDivisive(x []float64, minRuns int, p float64) []int {
	var cps []int
	for {
		bounds := append(append([]int{0}, cps...), len(x))
		bestQ, bestTau, bestA, bestB := math.Inf(-1), -1, 0, 0
		for i := 0; i+1 < len(bounds); i++ {
			a, b := bounds[i], bounds[i+1]
			if b-a < 2*minRuns {
				continue
			}
			tau, q := bestSplit(x[a:b], minRuns)
			if tau >= 0 && q > bestQ {
				bestQ, bestTau, bestA, bestB = q, a+tau, a, b
			}
		}
		if bestTau < 0 || tTest(x[bestA:bestTau], x[bestTau:bestB], 0.95).p > p {
			return cps
		}
		cps = append(cps, bestTau)
		slices.Sort(cps)
	}
}

// bestSplit returns the split tau of x (minRuns <= tau <= len(x)-minRuns)
// maximizing the E-divisive statistic
//
//	Q(tau) = m·k/(m+k) · (2/(m·k)·Σ|xi-xj| across − 2/(m(m−1))·Σ|xi-xj| left − 2/(k(k−1))·Σ|xi-xj| right)
//
// with m = tau and k = len(x) - tau, and that maximum. O(n²).
func bestSplit(x []float64, minRuns int) (int, float64) {
	n := len(x)
	total := 0.0
	for i := range n {
		for j := i + 1; j < n; j++ {
			total += math.Abs(x[i] - x[j])
		}
	}
	left, right := 0.0, total // sums of |xi-xj| within each side
	bestTau, bestQ := -1, math.Inf(-1)
	for tau := 1; tau < n; tau++ {
		// Move x[tau-1] from the right side to the left.
		v := x[tau-1]
		for i := 0; i < tau-1; i++ {
			left += math.Abs(x[i] - v)
		}
		for j := tau; j < n; j++ {
			right -= math.Abs(v - x[j])
		}
		if tau < minRuns || n-tau < minRuns {
			continue
		}
		m, k := float64(tau), float64(n-tau)
		across := total - left - right
		q := 2 * across / (m * k)
		if tau > 1 {
			q -= 2 * left / (m * (m - 1))
		}
		if n-tau > 1 {
			q -= 2 * right / (k * (k - 1))
		}
		q *= m * k / (m + k)
		if q > bestQ {
			bestTau, bestQ = tau, q
		}
	}
	return bestTau, bestQ
}

// merge removes the weakest candidates until every change point left passes
// the t-test at d.PValue (against its neighbours), moves the level by at
// least d.MinChange and has d.MinRuns points on each side.
func merge(y []float64, cands []int, d Detection) []int {
	cps := slices.Clone(cands)
	for len(cps) > 0 {
		bounds := append(append([]int{0}, cps...), len(y))
		weakest, weakP, weakMag := -1, -1.0, math.Inf(1)
		short := -1
		for i, idx := range cps {
			l, r := y[bounds[i]:idx], y[idx:bounds[i+2]]
			if len(l) < d.MinRuns || len(r) < d.MinRuns {
				short = i
				break
			}
			tt := tTest(l, r, d.Confidence)
			if tt.p > weakP {
				weakest, weakP = i, tt.p
			}
			weakMag = min(weakMag, tt.magnitude())
		}
		switch {
		case short >= 0:
			weakest = short
		case weakP > d.PValue:
			// weakest already set: the least significant
		default:
			// All significant: drop the smallest change if it is too small.
			weakest = -1
			for i, idx := range cps {
				tt := tTest(y[bounds[i]:idx], y[idx:bounds[i+2]], d.Confidence)
				if tt.magnitude() == weakMag && weakMag < d.MinChange {
					weakest = i
					break
				}
			}
			if weakest < 0 {
				return cps
			}
		}
		cps = slices.Delete(cps, weakest, weakest+1)
	}
	return cps
}

// tResult is a two-sample Student's t-test (pooled variance) of the means
// of two sides, with the interval of their difference.
type tResult struct {
	mean1, mean2 float64
	diff, lo, hi float64
	p            float64
}

// magnitude is the larger of the forward and backward relative change, as
// Otava measures a change (a halving and a doubling weigh the same).
func (t tResult) magnitude() float64 {
	return max(math.Abs(math.Exp(t.diff)-1), math.Abs(math.Exp(-t.diff)-1))
}

func tTest(a, b []float64, conf float64) tResult {
	r := tResult{p: 1}
	n1, n2 := float64(len(a)), float64(len(b))
	if len(a) == 0 || len(b) == 0 {
		return r
	}
	r.mean1, r.mean2 = mean(a), mean(b)
	r.diff, r.lo, r.hi = r.mean2-r.mean1, r.mean2-r.mean1, r.mean2-r.mean1
	df := n1 + n2 - 2
	if df < 1 {
		return r
	}
	ss := 0.0
	for _, v := range a {
		ss += (v - r.mean1) * (v - r.mean1)
	}
	for _, v := range b {
		ss += (v - r.mean2) * (v - r.mean2)
	}
	se := math.Sqrt(ss / df * (1/n1 + 1/n2))
	if se == 0 {
		if r.diff != 0 {
			r.p = 0
		}
		return r
	}
	r.p = tTwoSided(r.diff/se, df)
	h := tQuantile(1-(1-conf)/2, df) * se
	r.lo, r.hi = r.diff-h, r.diff+h
	return r
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, v := range xs {
		s += v
	}
	return s / float64(len(xs))
}
