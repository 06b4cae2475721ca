package stats

import (
	"fmt"
	"sync"
)

// SequentialSLA is an early-stopping SLA test that looks after every
// request, as the SLA search's trials do: it ends "met" as soon as the
// requests so far, with the violations among them, reach Looks[v] (the
// fewest requests that prove the SLA with v violations), and gives up once
// more than MaxViolations requests are over.
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
}

// Met reports whether n requests with v over the threshold end the test as
// met.
func (s SequentialSLA) Met(n, v int) bool {
	return v >= 0 && v < len(s.Looks) && n >= s.Looks[v]
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
	sequentialCache.Store(key, s)
	return s, nil
}

// falseMet is the exact chance that the sequential test with these looks
// ends "met" when each request is over the threshold independently with
// probability tail: the probability mass of the paths of (requests,
// violations) that reach a look before a violation past the last one.
func falseMet(looks []int, tail float64) float64 {
	maxV := len(looks) - 1
	mass := make([]float64, maxV+1) // P(v violations so far, still running)
	next := make([]float64, maxV+1)
	mass[0] = 1
	met := 0.0
	for n := 1; n <= looks[maxV]; n++ {
		clear(next)
		for v, p := range mass {
			next[v] += p * (1 - tail)
			if v < maxV {
				next[v+1] += p * tail
			} // past maxV violations the test gives up
		}
		mass, next = next, mass
		for v, need := range looks {
			if n >= need {
				met += mass[v]
				mass[v] = 0
			}
		}
	}
	return met
}
