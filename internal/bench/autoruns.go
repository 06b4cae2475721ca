package bench

import (
	"math"
	"slices"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// Defaults of AutoRuns.
const (
	DefaultAutoPercentile = 99
	DefaultAutoWidth      = 0.05
	DefaultAutoLimit      = 60 * time.Second
	DefaultAutoMaxRuns    = 1_000_000
	// autoMinRuns is the first check of the stopping rule.
	autoMinRuns = 20
)

// AutoRuns runs the measured phase until the confidence interval of one
// percentile is narrow enough, or a time limit passes (--runs auto).
type AutoRuns struct {
	// Percentile whose interval decides, e.g. 99 (default
	// DefaultAutoPercentile).
	Percentile float64
	// Width is the largest interval width accepted, as a fraction of the
	// percentile's estimate (default DefaultAutoWidth, 5%).
	Width float64
	// Limit stops the phase after this long whatever the interval (default
	// DefaultAutoLimit).
	Limit time.Duration
	// MaxRuns stops the phase after this many requests (default
	// DefaultAutoMaxRuns), bounding memory.
	MaxRuns int
}

func (a *AutoRuns) defaults() {
	if a.Percentile <= 0 {
		a.Percentile = DefaultAutoPercentile
	}
	if a.Width <= 0 {
		a.Width = DefaultAutoWidth
	}
	if a.Limit <= 0 {
		a.Limit = DefaultAutoLimit
	}
	if a.MaxRuns <= 0 {
		a.MaxRuns = DefaultAutoMaxRuns
	}
}

// interval is the rule's interval over latencies (any order).
func (a AutoRuns) interval(latencies []float64) stats.Interval {
	s := slices.Clone(latencies)
	slices.Sort(s)
	iv := stats.QuantileInterval(s, a.Percentile/100, stats.DefaultConfidence)
	iv.Percentile = a.Percentile
	return iv
}

// satisfied reports whether latencies bound the percentile on both sides
// within the target width.
func (a AutoRuns) satisfied(latencies []float64) bool {
	iv := a.interval(latencies)
	return iv.Sufficient && iv.RelWidth() <= a.Width
}

// nextCheck is the request count at which the rule is next evaluated after
// evaluating it at n: every 10% more requests (at least 10), so checking
// costs O(n log n) in all.
func nextCheck(n int) int {
	return max(n+10, n+n/10)
}

// autoResult fills the report's record of an automatic run count.
func (a AutoRuns) autoResult(latencies []float64, limited bool) *report.AutoRuns {
	iv := a.interval(latencies)
	out := &report.AutoRuns{
		Percentile: a.Percentile, TargetWidth: a.Width, LimitS: a.Limit.Seconds(), MaxRuns: a.MaxRuns,
		Runs: len(latencies), Confidence: iv.Confidence,
	}
	if w := iv.RelWidth(); !math.IsInf(w, 0) {
		out.Width = &w
	}
	switch {
	case iv.Sufficient && iv.RelWidth() <= a.Width:
		out.StoppedBy = "width"
	case len(latencies) >= a.MaxRuns:
		out.StoppedBy = "max runs"
	case limited:
		out.StoppedBy = "time limit"
	default:
		out.StoppedBy = "stopped"
	}
	return out
}
