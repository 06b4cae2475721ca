package analysis

import (
	"fmt"
	"io"
	"slices"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// SLAComparison sets the two runs' SLA checks side by side: each verdict
// is LoadGen-style early stopping (stats.SLAVerdict), so "insufficient
// requests" is a verdict of its own and never read as met or missed.
type SLAComparison struct {
	A *report.SLAResult `json:"a"`
	B *report.SLAResult `json:"b"`
	// Regressed: A's verdict is met and B's is missed, both decided.
	Regressed bool `json:"regressed"`
	// Same is false when the two runs checked different SLAs (threshold
	// or percentile): the verdicts are then shown, not compared.
	Same bool `json:"same"`
}

// addIntervals gives every percentile row each run's order-statistic
// interval (the report's own intervals, recomputed from the samples at the
// comparison's confidence).
func addIntervals(c *Comparison, a, b []float64) {
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	for i := range c.Latency {
		d := &c.Latency[i]
		q := quantileOf(d.Stat)
		if !(q > 0 && q < 1) {
			continue
		}
		ia := stats.QuantileInterval(sa, q, c.Confidence)
		ib := stats.QuantileInterval(sb, q, c.Confidence)
		ia.Percentile, ib.Percentile = 100*q, 100*q
		d.AInterval, d.BInterval = &ia, &ib
	}
}

// slaOf returns a report's SLA check, nil when it has none.
func slaOf(r *report.Report) *report.SLAResult {
	if r.Load == nil {
		return nil
	}
	return r.Load.SLA
}

// compareSLA compares the runs' SLA checks; nil unless both have one.
func compareSLA(a, b *report.Report) *SLAComparison {
	sa, sb := slaOf(a), slaOf(b)
	if sa == nil || sb == nil {
		return nil
	}
	s := &SLAComparison{A: sa, B: sb, Same: sa.ThresholdS == sb.ThresholdS && sa.Percentile == sb.Percentile}
	s.Regressed = s.Same && slaVerdict(sa) == string(stats.Met) && slaVerdict(sb) == string(stats.Missed)
	return s
}

// slaVerdict is the early-stopping verdict, or for a report written before
// verdicts existed, met/missed from the plain check.
func slaVerdict(r *report.SLAResult) string {
	if r.Verdict != "" {
		return r.Verdict
	}
	if r.Met {
		return string(stats.Met)
	}
	return string(stats.Missed)
}

// slaText is one run's SLA verdict in words.
func slaText(r *report.SLAResult) string {
	s := fmt.Sprintf("%s (%d requests, %d over)", slaVerdict(r), r.Requests, r.Violations)
	if r.RequestsNeeded > 0 {
		s += fmt.Sprintf("; %d requests would decide it", r.RequestsNeeded)
	}
	return s
}

// slaName is the SLA in words, e.g. "p99 ≤ 200ms".
func slaName(r *report.SLAResult) string {
	return fmt.Sprintf("p%g ≤ %s", r.Percentile, units.Duration(r.ThresholdS))
}

// writeIntervalsText renders the order-statistic intervals of the verdict's
// statistic and the SLA verdicts.
func writeIntervalsText(w io.Writer, c *Comparison) {
	for _, d := range c.Latency {
		if d.Stat != c.Percentile || d.AInterval == nil || d.BInterval == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s, order-statistic %.0f%% intervals: A %s, B %s", d.Stat, 100*c.Confidence, report.IntervalText(*d.AInterval), report.IntervalText(*d.BInterval))
		switch {
		case !d.AInterval.Sufficient || !d.BInterval.Sufficient:
			fmt.Fprintf(w, " (insufficient runs)\n")
		case *d.AInterval.Upper < *d.BInterval.Lower || *d.BInterval.Upper < *d.AInterval.Lower:
			fmt.Fprintf(w, " (do not overlap)\n")
		default:
			fmt.Fprintf(w, " (overlap)\n")
		}
	}
	if s := c.SLA; s != nil {
		if s.Same {
			fmt.Fprintf(w, "SLA %s (early stopping at %.0f%%): A %s; B %s\n", slaName(s.A), 100*slaConfidence(s), slaText(s.A), slaText(s.B))
		} else {
			fmt.Fprintf(w, "SLA: A checked %s: %s; B checked %s: %s (different SLAs, not compared)\n", slaName(s.A), slaText(s.A), slaName(s.B), slaText(s.B))
		}
	}
}

// slaConfidence is the confidence of the runs' SLA verdicts.
func slaConfidence(s *SLAComparison) float64 {
	if c := max(s.A.Confidence, s.B.Confidence); c > 0 {
		return c
	}
	return stats.SLAConfidence
}

// tuneWarnings warns when a side is the best configuration of a tuning
// sweep: the fastest of many measured configurations is, by being chosen
// for it, likely measured faster than it runs (the winner's curse).
func tuneWarnings(a, b *report.Report) []string {
	var w []string
	for _, side := range []struct {
		name string
		r    *report.Report
	}{{"A", a}, {"B", b}} {
		if t := side.r.Tune; t != nil && t.Best >= 0 && len(t.Rows) > 1 {
			w = append(w, fmt.Sprintf("run %s is the best of a --tune sweep of %d configurations: picked for its low p50, its latency is likely biased low; compare a run of its own (the sweep's reproducing command) instead", side.name, len(t.Rows)))
		}
	}
	return w
}
