package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestQueriesNeededLoadGen(t *testing.T) {
	// MLPerf LoadGen: 459 queries with no overlatency query prove p99 at
	// 99% confidence. 0.99^459 = 0.00995 <= 0.01 < 0.99^458 = 0.01005.
	if got := QueriesNeeded(0, 99, 0.99); got != 459 {
		t.Fatalf("QueriesNeeded(0, p99, 99%%) = %d, want 459", got)
	}
	for _, v := range []int{0, 1, 5, 20} {
		n := QueriesNeeded(v, 99, 0.99)
		if BinomialCDF(v, n, 0.01) > 0.01 || BinomialCDF(v, n-1, 0.01) <= 0.01 {
			t.Errorf("v=%d: n=%d is not the smallest n with P(B<=v) <= 1%%", v, n)
		}
		if v > 0 && n <= QueriesNeeded(v-1, 99, 0.99) {
			t.Errorf("v=%d: needs %d, not more than with one violation fewer", v, n)
		}
	}
}

func TestSLAVerdict(t *testing.T) {
	for _, c := range []struct {
		n, v   int
		want   Verdict
		needed int
	}{
		{459, 0, Met, 0},
		{458, 0, Insufficient, 459},
		{100, 0, Insufficient, 459},
		{100, 10, Missed, 0},
		{1000, 10, Insufficient, 0}, // at exactly the allowed rate: more requests point to missed, not met
		{0, 0, Insufficient, 459},
	} {
		v, need := SLAVerdict(c.n, c.v, 99, 0.99)
		if v != c.want || need != c.needed {
			t.Errorf("SLAVerdict(%d, %d) = %q, %d; want %q, %d", c.n, c.v, v, need, c.want, c.needed)
		}
	}
}

func TestMinSamples(t *testing.T) {
	for _, c := range []struct{ q, conf float64 }{{0.5, 0.95}, {0.9, 0.95}, {0.99, 0.95}, {0.999, 0.95}, {0.99, 0.99}} {
		n := MinSamples(c.q, c.conf)
		alpha := (1 - c.conf) / 2
		if math.Pow(c.q, float64(n)) > alpha || math.Pow(c.q, float64(n-1)) <= alpha {
			t.Errorf("MinSamples(%v, %v) = %d, not the smallest n with q^n <= %v", c.q, c.conf, n, alpha)
		}
		// The interval exists from n samples on and not before.
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i)
		}
		if !QuantileInterval(xs, c.q, c.conf).Sufficient || QuantileInterval(xs[:n-1], c.q, c.conf).Sufficient {
			t.Errorf("q=%v conf=%v: interval sufficiency does not switch at %d samples", c.q, c.conf, n)
		}
	}
	if got := MinSamples(0.99, 0.95); got != 368 {
		t.Errorf("MinSamples(p99, 95%%) = %d, want 368", got)
	}
}

// TestIntervalRanksExact checks the ranks against the binomial directly:
// the coverage P(l <= B < u) reaches the confidence, and neither rank can
// move inwards without a tail exceeding (1-conf)/2.
func TestIntervalRanksExact(t *testing.T) {
	for _, n := range []int{20, 100, 367, 1000, 5000} {
		for _, q := range []float64{0.5, 0.9, 0.95, 0.99, 0.999} {
			conf := 0.95
			alpha := (1 - conf) / 2
			l, u := orderRanks(n, q, conf)
			if l >= 1 {
				if lower := BinomialCDF(l-1, n, q); lower > alpha+1e-12 {
					t.Errorf("n=%d q=%v: P(B < l=%d) = %v > %v", n, q, l, lower, alpha)
				}
				if BinomialCDF(l, n, q) <= alpha-1e-12 {
					t.Errorf("n=%d q=%v: l=%d could be %d", n, q, l, l+1)
				}
			}
			if u <= n {
				if upper := 1 - BinomialCDF(u-1, n, q); upper > alpha+1e-9 {
					t.Errorf("n=%d q=%v: P(B >= u=%d) = %v > %v", n, q, u, upper, alpha)
				}
				if 1-BinomialCDF(u-2, n, q) <= alpha-1e-9 {
					t.Errorf("n=%d q=%v: u=%d could be %d", n, q, u, u-1)
				}
			}
			if l >= 1 && u <= n {
				if cov := BinomialCDF(u-1, n, q) - BinomialCDF(l-1, n, q); cov < conf-1e-9 {
					t.Errorf("n=%d q=%v: coverage %v < %v", n, q, cov, conf)
				}
			}
		}
	}
}

// TestIntervalCoverage draws seeded samples from a skewed distribution
// with a known quantile and counts how often the interval covers it.
func TestIntervalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials, n, q = 2000, 400, 0.99
	truth := -math.Log(1 - q) // exponential(1)
	covered, sufficient := 0, 0
	xs := make([]float64, n)
	for range trials {
		for i := range xs {
			xs[i] = rng.ExpFloat64()
		}
		slices.Sort(xs)
		iv := QuantileInterval(xs, q, 0.95)
		if !iv.Sufficient {
			continue
		}
		sufficient++
		if *iv.Lower <= truth && truth <= *iv.Upper {
			covered++
		}
	}
	if sufficient != trials {
		t.Fatalf("%d of %d intervals from %d samples were insufficient", trials-sufficient, trials, n)
	}
	if got := float64(covered) / trials; got < 0.93 {
		t.Errorf("coverage %.3f, want about 0.95 or more", got)
	}
}

func TestSummarizeMarksInsufficient(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	s := Summarize(xs)
	if len(s.Intervals) != len(Percentiles) {
		t.Fatalf("%d intervals, want %d", len(s.Intervals), len(Percentiles))
	}
	for _, c := range []struct {
		p    float64
		want bool
	}{{50, true}, {90, true}, {95, true}, {99, false}, {99.9, false}} {
		iv, ok := s.Interval(c.p)
		if !ok || iv.Sufficient != c.want || s.Supported(c.p) != c.want {
			t.Errorf("p%v from 100 runs: sufficient %v, want %v", c.p, iv.Sufficient, c.want)
		}
	}
	iv, _ := s.Interval(50)
	if *iv.Lower > s.P50 || *iv.Upper < s.P50 || iv.Estimate != s.P50 {
		t.Errorf("p50 interval %v does not contain the estimate %v", iv, s.P50)
	}
	if iv, _ := s.Interval(99.9); iv.MinSamples < 3000 {
		t.Errorf("p99.9 needs %d samples, want thousands", iv.MinSamples)
	}
}

func FuzzQuantileInterval(f *testing.F) {
	f.Add(10, 0.5, 0.95)
	f.Add(1, 0.999, 0.99)
	f.Fuzz(func(t *testing.T, n int, q, conf float64) {
		if n < 0 || n > 3000 {
			return
		}
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i)
		}
		iv := QuantileInterval(xs, q, conf)
		if iv.Lower != nil && iv.Upper != nil && *iv.Lower > *iv.Upper {
			t.Fatalf("lower %v above upper %v", *iv.Lower, *iv.Upper)
		}
		if iv.Sufficient && (iv.Estimate < *iv.Lower || iv.Estimate > *iv.Upper) {
			t.Fatalf("estimate %v outside [%v, %v]", iv.Estimate, *iv.Lower, *iv.Upper)
		}
	})
}
