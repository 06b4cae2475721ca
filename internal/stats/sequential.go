package stats

import (
	"fmt"
	"math"
	"sync"
)

// SequentialSLA is an early-stopping SLA test that looks after every
// request, as the SLA search's trials do: it ends "met" as soon as the
// requests so far, with the violations among them, reach Looks[v] (the
// fewest requests that prove the SLA with v violations). Once more than
// MaxViolations requests are over, "met" is out of reach, and the test
// ends "missed" as soon as a mixture of likelihood ratios says so (see
// Missed): a rate above the peak, where violations come late (once a
// queue has built up) and then one after another, is proven missed a few
// requests later instead of being left undecided. Fewer than MaxViolations+1 violations
// never prove a miss: one stall puts the few requests queued behind it
// over, which read as independent requests would look like a miss.
//
// Looking after every request spends the error rate more than once: with
// LoadGen's one-look rule applied at every step (met as soon as
// P(Binomial(n, 1-P) <= v) <= 1%), a server whose true share over the
// threshold is exactly 1-P is called "met" 2.7% of the time for p99 with up
// to 4 violations allowed (2.2% when the first look waits for 662
// requests), not 1%. PerLook is the smaller error rate each
// look uses instead, chosen so that the whole test's chance of a false
// "met" is at most 1-conf; it is computed exactly (see falseMet).
type SequentialSLA struct {
	Percentile    float64
	Confidence    float64
	MaxViolations int
	// PerLook is the error rate of each look: Looks[v] is the fewest n
	// with P(Binomial(n, 1-P) <= v) <= PerLook.
	PerLook float64
	Looks   []int
	// FalseMet is the test's chance of calling a server met whose true
	// share over the threshold is exactly 1-P: at most 1-Confidence.
	FalseMet float64
	// FalseMissed is the test's chance, within MissCheckHorizon requests,
	// of calling a server missed whose true share over the threshold is
	// exactly 1-P (computed exactly; at most 1-Confidence at any horizon).
	FalseMissed float64
}

// MissCheckHorizon is the requests over which NewSequentialSLA computes
// FalseMissed, as a check of the bound that holds at every horizon.
const MissCheckHorizon = 2000

// missRatio and missAlternatives define the alternatives of the "missed"
// test: shares over the threshold of (1-P)·missRatio^k, k = 1 ... (at most
// missAlternatives, while below 1), equally weighted.
const (
	missRatio        = 1.25
	missAlternatives = 30
)

// Met reports whether n requests with v over the threshold end the test as
// met.
func (s SequentialSLA) Met(n, v int) bool {
	return v >= 0 && v < len(s.Looks) && n >= s.Looks[v]
}

// Missed reports whether n requests with v over the threshold end the
// test as missed: more than MaxViolations over, and a mixture of
// likelihood ratios (shares over the threshold 1.25, 1.56, ... times the
// allowed one, against the allowed one, equally weighted) at least
// 1/(1-Confidence). The mixture is a nonnegative supermartingale while the
// true share is within the SLA, so by Ville's inequality the chance that
// it ever reaches that level, after any number of requests and however
// often it is looked at, is at most 1-Confidence: no horizon and no
// calibration are needed, and a queue that builds up late in a long trial
// is judged as well as an early one.
func (s SequentialSLA) Missed(n, v int) bool {
	if v <= s.MaxViolations || v > n {
		return false
	}
	p0 := (100 - s.Percentile) / 100
	level := -math.Log(1 - s.Confidence)
	lr, k := 0.0, 0 // sum of the alternatives' likelihood ratios
	for p := p0 * missRatio; p < 1 && k < missAlternatives; p *= missRatio {
		lr += math.Exp(float64(v)*math.Log(p/p0) + float64(n-v)*math.Log((1-p)/(1-p0)))
		k++
	}
	return k > 0 && math.Log(lr/float64(k)) >= level
}

// MetProbability is the chance that the test ends met when each request
// is over the threshold independently with probability share (exact).
func (s SequentialSLA) MetProbability(share float64) float64 {
	if len(s.Looks) == 0 {
		return 0
	}
	return falseMet(s.Looks, share)
}

// ProvableShare is the share over the threshold at which the test ends met
// with probability prob (between 0 and 1): the highest share, below the
// SLA's own, at which met comes at least that often. 0 when no share
// does.
func (s SequentialSLA) ProvableShare(prob float64) float64 {
	tail := (100 - s.Percentile) / 100
	if !(prob > 0 && prob < 1) || !(tail > 0 && tail < 1) || s.MetProbability(tail*1e-6) < prob {
		return 0
	}
	lo, hi := tail*1e-6, tail // met becomes rarer as the share grows
	for hi-lo > lo*1e-3 {
		mid := (lo + hi) / 2
		if s.MetProbability(mid) >= prob {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// MostViolations is the most violations among at most n requests that can
// still end the test as met; -1 when n requests cannot.
func (s SequentialSLA) MostViolations(n int) int {
	k := -1
	for v, need := range s.Looks {
		if need <= n {
			k = v
		}
	}
	return k
}

var sequentialCache sync.Map // sequentialKey → SequentialSLA

type sequentialKey struct {
	p, conf float64
	maxV    int
}

// NewSequentialSLA returns the calibrated sequential test for an SLA at
// percentile (e.g. 99) with overall confidence conf and at most maxV
// violations. It errs on inputs out of range.
func NewSequentialSLA(percentile, conf float64, maxV int) (SequentialSLA, error) {
	tail, alpha := (100-percentile)/100, 1-conf
	if !(tail > 0 && tail < 1) || !(alpha > 0 && alpha < 1) || maxV < 0 || maxV > 50 {
		return SequentialSLA{}, fmt.Errorf("sequential SLA test: percentile %g, confidence %g and %d violations: want 0 < percentile < 100, 0 < confidence < 1, 0 to 50 violations",
			percentile, conf, maxV)
	}
	key := sequentialKey{percentile, conf, maxV}
	if s, ok := sequentialCache.Load(key); ok {
		return s.(SequentialSLA), nil
	}
	looks := func(a float64) []int {
		out := make([]int, maxV+1)
		for v := range out {
			out[v] = QueriesNeeded(v, percentile, 1-a)
		}
		return out
	}
	// The false-met rate grows with the per-look rate; bisect for the
	// largest per-look rate that keeps it within alpha. alpha/(maxV+1)
	// (Bonferroni over the looks where the allowance steps up) is always
	// within it and bounds the search from below.
	lo, hi := alpha/float64(maxV+1), alpha
	if falseMet(looks(hi), tail) <= alpha {
		lo = hi
	}
	for range 40 {
		if hi-lo <= lo*1e-4 {
			break
		}
		mid := (lo + hi) / 2
		if falseMet(looks(mid), tail) <= alpha {
			lo = mid
		} else {
			hi = mid
		}
	}
	s := SequentialSLA{Percentile: percentile, Confidence: conf, MaxViolations: maxV, PerLook: lo, Looks: looks(lo)}
	s.FalseMet = falseMet(s.Looks, tail)
	s.FalseMissed = falseMissed(s, MissCheckHorizon, tail)
	sequentialCache.Store(key, s)
	return s, nil
}

// falseMissed is the exact chance that test s ends "missed" within
// horizon requests when each request is over the threshold independently
// with probability share. Paths that end "met" first are stopped, as in a
// trial.
func falseMissed(s SequentialSLA, horizon int, share float64) float64 {
	return falseMissedBy(s, horizon, share, s.Missed)
}

// falseMissedBy is falseMissed with the rule missed(n, v), which must be
// monotone: true for v, true for every larger v; true for n, v, then for
// n-1, v.
func falseMissedBy(s SequentialSLA, horizon int, share float64, missed func(n, v int) bool) float64 {
	_, p := endings(s.Looks, horizon, share, missed)
	return p
}

// falseMet is the exact chance that the sequential test with these looks
// ends "met" when each request is over the threshold independently with
// probability share: the probability mass of the paths of (requests,
// violations) that reach a look before a violation past the last one.
func falseMet(looks []int, share float64) float64 {
	p, _ := endings(looks, looks[len(looks)-1], share, nil)
	return p
}

// endings follows every path of (requests, violations) up to horizon
// requests, each request over the threshold independently with
// probability share, and returns the chance that the test ends met (a
// look reached: n >= looks[v]) and the chance it ends missed (missed(n, v);
// nil: never, and paths past the last look's violations are dropped, as
// they can no longer end met).
func endings(looks []int, horizon int, share float64, missed func(n, v int) bool) (met, miss float64) {
	maxV := len(looks) - 1
	// bound[n] is the fewest violations among n requests that end the
	// test missed (n+1: none); it never falls as n grows.
	bound := make([]int, horizon+1)
	size := maxV + 1
	if missed != nil {
		v := maxV + 1
		for n := 1; n <= horizon; n++ {
			for v <= n && !missed(n, v) {
				v++
			}
			bound[n] = v
		}
		size = bound[horizon] + 2
	}
	mass := make([]float64, size) // P(v violations so far, still running)
	next := make([]float64, size)
	mass[0] = 1
	for n := 1; n <= horizon; n++ {
		clear(next)
		for v, p := range mass {
			if p == 0 {
				continue
			}
			next[v] += p * (1 - share)
			if v+1 < size {
				next[v+1] += p * share
			}
		}
		mass, next = next, mass
		for v := range mass {
			switch {
			case v <= maxV && n >= looks[v]:
				met += mass[v]
				mass[v] = 0
			case missed != nil && v >= bound[n]:
				miss += mass[v]
				mass[v] = 0
			}
		}
	}
	return met, miss
}
