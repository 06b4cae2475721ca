package bench

import (
	"math"
	"slices"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// Outlier rule: a latency more than OutlierK robust standard deviations
// above the median. The robust standard deviation is 1.4826 × the median
// absolute deviation (MAD), which equals the standard deviation for normal
// data, floored at 1% of the median so that a nearly constant series does
// not flag noise.
const (
	OutlierK       = 5
	madToSigma     = 1.4826
	madFloorOfP50  = 0.01
	minJitterCount = 2
)

// jitter describes the run-to-run variation of a phase's successful
// requests, in request order; nil for fewer than two.
func jitter(recs []record) *report.Jitter {
	var xs []float64
	var idx []int
	var off []float64
	for _, r := range recs {
		if r.err == nil {
			xs = append(xs, r.latency.Seconds())
			idx = append(idx, r.seq)
			off = append(off, r.offset.Seconds())
		}
	}
	if len(xs) < minJitterCount {
		return nil
	}
	s := stats.Summarize(xs)
	j := &report.Jitter{StdS: s.Std, K: OutlierK}
	if s.P50 > 0 {
		j.TailRatio = s.P99 / s.P50
	}
	var sum float64
	for i := 1; i < len(xs); i++ {
		d := math.Abs(xs[i] - xs[i-1])
		sum += d
		j.MaxDeltaS = max(j.MaxDeltaS, d)
	}
	j.MeanDeltaS = sum / float64(len(xs)-1)

	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - s.P50)
	}
	j.MADS = median(dev)
	j.ThresholdS = s.P50 + OutlierK*max(madToSigma*j.MADS, madFloorOfP50*s.P50)
	var out []report.Outlier
	for i, x := range xs {
		if x > j.ThresholdS {
			out = append(out, report.Outlier{Run: idx[i], OffsetS: off[i], LatencyS: x})
		}
	}
	j.OutlierCount = len(out)
	if len(out) > report.MaxOutliers {
		// Keep the slowest, listed in run order.
		slices.SortStableFunc(out, func(a, b report.Outlier) int {
			switch {
			case a.LatencyS > b.LatencyS:
				return -1
			case a.LatencyS < b.LatencyS:
				return 1
			}
			return 0
		})
		out = out[:report.MaxOutliers]
		slices.SortFunc(out, func(a, b report.Outlier) int { return a.Run - b.Run })
	}
	j.Outliers = out
	return j
}
