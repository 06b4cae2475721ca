package analysis

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/ortel-dev/ortel/internal/stats"
)

// Bootstrap estimates statistics of latency samples and their confidence
// intervals by resampling: each resample draws len(xs) samples with
// replacement. Resampling works on the sorted samples through per-sample
// draw counts, so one resample costs O(n) however many statistics are
// read from it, and quantiles use the same estimator as package stats
// (type 7, linear between closest ranks).
type Bootstrap struct {
	sorted []float64
	counts []int
	rng    *rand.Rand
	// scratch of Resample
	ws   []rankWant
	vals []float64
}

// rankWant asks for the element of a rank of a resample.
type rankWant struct {
	rank int
	i    int // index into vals
}

// NewBootstrap prepares resampling of xs with a generator seeded by seed,
// so the same samples and seed give the same intervals.
func NewBootstrap(xs []float64, seed uint64) *Bootstrap {
	s := slices.Clone(xs)
	slices.Sort(s)
	return &Bootstrap{sorted: s, counts: make([]int, len(s)), rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Stat names a statistic: a quantile in [0,1], or the mean (Q < 0).
type Stat struct {
	Name string
	Q    float64
}

// Mean is the Stat of the arithmetic mean.
var Mean = Stat{Name: "mean", Q: -1}

// Value returns stat over the original samples.
func (b *Bootstrap) Value(st Stat) float64 {
	if st.Q < 0 {
		var sum float64
		for _, x := range b.sorted {
			sum += x
		}
		return sum / float64(len(b.sorted))
	}
	return stats.QuantileSorted(b.sorted, st.Q)
}

// Resample draws one resample and writes the value of each stat into out
// (len(out) == len(sts)). One pass over the draw counts serves every stat.
func (b *Bootstrap) Resample(sts []Stat, out []float64) {
	n := len(b.sorted)
	clear(b.counts)
	for range n {
		b.counts[b.rng.IntN(n)]++
	}
	// The ranks the quantiles need: floor and floor+1 of q·(n-1).
	ws := b.ws[:0]
	if cap(b.vals) < 2*len(sts) {
		b.vals = make([]float64, 2*len(sts))
	}
	vals := b.vals[:2*len(sts)]
	for i, st := range sts {
		if st.Q >= 0 {
			lo := int(math.Floor(st.Q * float64(n-1)))
			ws = append(ws, rankWant{lo, 2 * i}, rankWant{min(lo+1, n-1), 2*i + 1})
		}
	}
	slices.SortFunc(ws, func(x, y rankWant) int { return x.rank - y.rank })
	b.ws = ws
	var sum float64
	seen, k := 0, 0
	for j, c := range b.counts {
		sum += float64(c) * b.sorted[j]
		seen += c
		for k < len(ws) && ws[k].rank < seen {
			vals[ws[k].i] = b.sorted[j]
			k++
		}
	}
	for i, st := range sts {
		if st.Q < 0 {
			out[i] = sum / float64(n)
			continue
		}
		h := st.Q * float64(n-1)
		out[i] = vals[2*i] + (h-math.Floor(h))*(vals[2*i+1]-vals[2*i])
	}
}

// RatioCI returns, for each stat, the change stat(b)/stat(a) - 1 on the
// original samples and its percentile-bootstrap confidence interval at
// level conf (e.g. 0.95) from resamples paired draws of a and b.
func RatioCI(a, b *Bootstrap, sts []Stat, resamples int, conf float64) (point, lo, hi []float64) {
	point = make([]float64, len(sts))
	for i, st := range sts {
		point[i] = b.Value(st)/a.Value(st) - 1
	}
	ratios := make([][]float64, len(sts))
	va, vb := make([]float64, len(sts)), make([]float64, len(sts))
	for range resamples {
		a.Resample(sts, va)
		b.Resample(sts, vb)
		for i := range sts {
			ratios[i] = append(ratios[i], vb[i]/va[i]-1)
		}
	}
	lo, hi = make([]float64, len(sts)), make([]float64, len(sts))
	alpha := (1 - conf) / 2
	for i := range sts {
		slices.Sort(ratios[i])
		lo[i] = stats.QuantileSorted(ratios[i], alpha)
		hi[i] = stats.QuantileSorted(ratios[i], 1-alpha)
	}
	return point, lo, hi
}
