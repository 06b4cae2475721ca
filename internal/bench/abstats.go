package bench

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// ABMethod says how bench --ab computes its intervals, for the report.
//
// Why a paired block bootstrap. The two sides run in blocks, an A block
// and a B block side by side in every pair (in a shuffled order), so what
// the machine does over minutes (a neighbour, a frequency change) hits
// both blocks of a pair alike: the pair, not the run, is the independent
// unit. Resampling whole pairs keeps that: each resample draws pairs with
// replacement, pools the runs of the drawn blocks side by side, and
// computes B/A of the pooled statistic. This works for every statistic
// the report gives — the pooled p90 and p99 included, which a statistic
// of block medians (Hodges-Lehmann on log ratios) cannot give — and for
// throughput and CPU per run, which are ratios of sums. Runs within a
// block are not resampled separately: they share the block's conditions,
// and treating them as independent would make the interval too narrow.
// The percentile interval of the log ratio is used (a ratio's natural
// scale); its coverage on synthetic data with a known ratio is checked by
// TestABIntervalCoverage.
const ABMethod = "paired block bootstrap: pairs of blocks (one A, one B, measured side by side in a shuffled order) are " +
	"resampled with replacement, the runs of the drawn blocks are pooled per side, and the percentile interval of " +
	"log(B/A) of each pooled statistic is taken; a percentile is bounded only when each side's pooled runs meet the " +
	"order-statistic rule at the look's confidence. Repeated looks: a fixed schedule of looks at equal fractions of " +
	"the time cap, each at confidence 1-(1-C)/looks (Bonferroni), so the chance that any look's interval misses is at most 1-C"

// Defaults of an A/B comparison.
const (
	// DefaultABThreshold is the relative change that counts (±2%).
	DefaultABThreshold = 0.02
	// DefaultABLooks is the number of looks at the data, at equal
	// fractions of the time cap.
	DefaultABLooks = 4
	// DefaultABResamples is the number of bootstrap resamples per look.
	DefaultABResamples = 1000
	// MinABPairs is the fewest pairs a look needs to bound anything.
	MinABPairs = 8
)

// abBlock is one block's runs as the analysis sees them.
type abBlock struct {
	lat  []float64 // successful runs' latencies, seconds, sorted
	wall float64   // seconds
	cpu  float64   // process CPU seconds; < 0: unknown
	runs int       // successful runs
}

// abPair is an A block and a B block measured side by side.
type abPair struct{ a, b abBlock }

// abStatDef is one statistic of the comparison.
type abStatDef struct {
	name     string
	unit     string
	q        float64 // percentile as a fraction; 0 for the others
	higher   bool
	headline bool
	// value computes the statistic over pooled blocks (lat unsorted; value
	// may reorder it).
	value func(lat []float64, runs int, wall, cpu float64) float64
}

func abStatDefs() []abStatDef {
	pct := func(q float64) func([]float64, int, float64, float64) float64 {
		return func(lat []float64, _ int, _, _ float64) float64 { return selectQuantile(lat, q) }
	}
	return []abStatDef{
		{name: "p50", unit: "s", q: 0.5, headline: true, value: pct(0.5)},
		{name: "p90", unit: "s", q: 0.9, headline: true, value: pct(0.9)},
		{name: "p99", unit: "s", q: 0.99, value: pct(0.99)},
		{name: "runs_per_s", unit: "1/s", higher: true, value: func(_ []float64, runs int, wall, _ float64) float64 {
			if wall <= 0 {
				return math.NaN()
			}
			return float64(runs) / wall
		}},
		{name: "cpu_s_per_run", unit: "s", value: func(_ []float64, runs int, _, cpu float64) float64 {
			if cpu <= 0 || runs == 0 {
				return math.NaN()
			}
			return cpu / float64(runs)
		}},
	}
}

// pooled is one side of some pairs pooled: latencies sorted, sums.
type pooled struct {
	lat  []float64
	runs int
	wall float64
	cpu  float64
}

// pool pools side (0: A, 1: B) of pairs[idx...] into p, reusing its
// storage; the latencies are left unsorted (a resample's quantiles are
// selected, not sorted for: the bootstrap's cost is linear in the runs).
func pool(p *pooled, pairs []abPair, idx []int, side int) {
	p.lat, p.runs, p.wall, p.cpu = p.lat[:0], 0, 0, 0
	for _, i := range idx {
		b := pairs[i].a
		if side == 1 {
			b = pairs[i].b
		}
		p.lat = append(p.lat, b.lat...)
		p.runs += b.runs
		p.wall += b.wall
		if b.cpu < 0 || p.cpu < 0 {
			p.cpu = -1
		} else {
			p.cpu += b.cpu
		}
	}
}

// selectQuantile is stats.QuantileSorted's q-quantile of xs (the same
// interpolation between closest ranks) without sorting: it reorders xs.
func selectQuantile(xs []float64, q float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	h := min(max(q, 0), 1) * float64(n-1)
	lo := int(math.Floor(h))
	v := nthElement(xs, lo)
	if lo+1 >= n || h == float64(lo) {
		return v
	}
	// The next order statistic is the smallest of the part above lo.
	next := xs[lo+1]
	for _, x := range xs[lo+2:] {
		next = min(next, x)
	}
	return v + (h-float64(lo))*(next-v)
}

// nthElement reorders xs so that xs[k] is its k-th smallest value (0-based),
// with nothing larger before it and nothing smaller after it (Hoare's
// selection, middle pivot), and returns it.
func nthElement(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		pivot := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// abAnalyze computes every statistic's ratio B/A and its interval at
// confidence conf over pairs, with resamples bootstrap resamples drawn
// from rng, and judges each against threshold.
func abAnalyze(pairs []abPair, conf, threshold float64, resamples int, rng *rand.Rand) []report.ABStat {
	defs := abStatDefs()
	out := make([]report.ABStat, len(defs))
	all := make([]int, len(pairs))
	for i := range all {
		all[i] = i
	}
	var pa, pb pooled
	pool(&pa, pairs, all, 0)
	pool(&pb, pairs, all, 1)
	bounded := make([]bool, len(defs))
	for k, d := range defs {
		a, b := d.value(pa.lat, pa.runs, pa.wall, pa.cpu), d.value(pb.lat, pb.runs, pb.wall, pb.cpu)
		out[k] = report.ABStat{Name: d.name, Unit: d.unit, Headline: d.headline, HigherIsBetter: d.higher, Verdict: "undecided"}
		if !math.IsNaN(a) {
			out[k].A = a
		}
		if !math.IsNaN(b) {
			out[k].B = b
		}
		if a > 0 && b > 0 {
			out[k].Ratio = b / a
		}
		bounded[k] = len(pairs) >= MinABPairs && a > 0 && b > 0
		if d.q > 0 {
			need := stats.MinSamples(d.q, conf)
			bounded[k] = bounded[k] && pa.runs >= need && pb.runs >= need
		}
	}
	if len(pairs) < MinABPairs {
		return out
	}
	logs := make([][]float64, len(defs))
	idx := make([]int, len(pairs))
	for r := 0; r < resamples; r++ {
		for i := range idx {
			idx[i] = rng.IntN(len(pairs))
		}
		pool(&pa, pairs, idx, 0)
		pool(&pb, pairs, idx, 1)
		for k, d := range defs {
			if !bounded[k] {
				continue
			}
			a, b := d.value(pa.lat, pa.runs, pa.wall, pa.cpu), d.value(pb.lat, pb.runs, pb.wall, pb.cpu)
			if a > 0 && b > 0 {
				logs[k] = append(logs[k], math.Log(b/a))
			}
		}
	}
	for k := range defs {
		if !bounded[k] || len(logs[k]) < resamples/2 {
			continue
		}
		xs := logs[k]
		slices.Sort(xs)
		alpha := 1 - conf
		lo, hi := math.Exp(stats.QuantileSorted(xs, alpha/2)), math.Exp(stats.QuantileSorted(xs, 1-alpha/2))
		s := &out[k]
		s.Bounded, s.Lower, s.Upper = true, &lo, &hi
		s.Verdict = abJudge(lo, hi, threshold, s.HigherIsBetter)
	}
	return out
}

// abJudge classifies a ratio interval [lo, hi] of B/A against ±threshold:
// better or worse beyond it, within it, or undecided.
func abJudge(lo, hi, threshold float64, higherIsBetter bool) string {
	up, down := "slower", "faster"
	if higherIsBetter {
		up, down = "faster", "slower"
	}
	switch {
	case lo > 1+threshold:
		return up
	case hi < 1-threshold:
		return down
	case lo >= 1-threshold && hi <= 1+threshold:
		return "no_difference"
	}
	return "undecided"
}

// abSettled reports whether every headline statistic is decided.
func abSettled(st []report.ABStat) bool {
	for _, s := range st {
		if s.Headline && s.Verdict == "undecided" {
			return false
		}
	}
	return true
}
