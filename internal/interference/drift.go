package interference

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
)

// Drift test parameters. The test runs on block medians rather than on
// single runs: medians ignore the odd slow run (an outlier is not a
// trend), and consecutive runs are correlated while block medians far
// apart are nearly independent, which the Mann-Kendall test assumes.
const (
	// driftBlocks is the number of blocks; fewer with fewer runs.
	driftBlocks = 20
	// driftMinPerBlock runs make a block's median.
	driftMinPerBlock = 5
	// driftMinBlocks is the fewest blocks the test runs on: with 8,
	// a perfect monotone trend has p = 0.0006.
	driftMinBlocks = 8
	// DriftP is the two-sided p-value below which a trend is real.
	DriftP = 0.01
	// DriftMinChange is the smallest change from the phase's start to its
	// end (Sen's slope times the phase, relative to the median) worth
	// reporting: under it a trend is real but moves no figure that
	// matters.
	DriftMinChange = 0.05
)

// DriftResult is the outcome of the drift test.
type DriftResult struct {
	Blocks int
	// Change is the latency change from the first block to the last as a
	// share of the median (Sen's slope times the blocks), signed.
	Change float64
	P      float64
	Drift  bool
}

// CheckDrift runs a Mann-Kendall trend test on the block medians of
// latencies, in the order they were measured. Too few runs give a result
// with zero Blocks and no drift.
func CheckDrift(latencies []float64) DriftResult {
	k := min(driftBlocks, len(latencies)/driftMinPerBlock)
	if k < driftMinBlocks {
		return DriftResult{}
	}
	meds := make([]float64, k)
	for i := range k {
		lo, hi := i*len(latencies)/k, (i+1)*len(latencies)/k
		meds[i] = median(latencies[lo:hi])
	}
	var s float64
	var slopes []float64
	for i := 0; i < k; i++ {
		for j := i + 1; j < k; j++ {
			d := meds[j] - meds[i]
			switch {
			case d > 0:
				s++
			case d < 0:
				s--
			}
			slopes = append(slopes, d/float64(j-i))
		}
	}
	n := float64(k)
	variance := n * (n - 1) * (2*n + 5) / 18
	z := 0.0
	switch {
	case s > 0:
		z = (s - 1) / math.Sqrt(variance)
	case s < 0:
		z = (s + 1) / math.Sqrt(variance)
	}
	r := DriftResult{Blocks: k, P: math.Erfc(math.Abs(z) / math.Sqrt2)}
	if mid := median(latencies); mid > 0 {
		r.Change = median(slopes) * (n - 1) / mid
	}
	r.Drift = r.P < DriftP && math.Abs(r.Change) >= DriftMinChange
	return r
}

// WithDrift adds the drift test's reason to v when latencies (in the
// order measured) drifted; v is then disturbed.
func WithDrift(v Verdict, latencies []float64) Verdict {
	d := CheckDrift(latencies)
	if !d.Drift {
		return v
	}
	dir := "rose"
	if d.Change < 0 {
		dir = "fell"
	}
	v.Reasons = append(slices.Clone(v.Reasons), Reason{
		Kind: KindDrift, Share: 1,
		Detail: fmt.Sprintf("latency %s %.0f%% from the start of the phase to its end (Mann-Kendall trend test on %d block medians, p = %.2g)",
			dir, 100*math.Abs(d.Change), d.Blocks, d.P),
	})
	sortReasons(v.Reasons)
	if v.State != report.MeasurementDisturbed {
		v.State = report.MeasurementDisturbed
		v.Advice = advice(v, -1)
	} else {
		v.Advice = advice(v, pinnedCPU(v.Advice))
	}
	return v
}

// pinnedCPU recovers the core the advice already suggests, -1 if none.
func pinnedCPU(advice []string) int {
	for _, a := range advice {
		var c int
		if i := strings.Index(a, "taskset -c "); i >= 0 {
			if _, err := fmt.Sscanf(a[i+len("taskset -c "):], "%d", &c); err == nil {
				return c
			}
		}
	}
	return -1
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
