package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// SummaryFindings is how many findings the summary shows, most important
// first.
const SummaryFindings = 3

// summaryPercentiles are the latency percentiles the summary shows.
var summaryPercentiles = []float64{50, 95, 99}

// WriteSummary renders the report's summary for a terminal, in about 20
// lines: the model and machine, latency with its confidence intervals (or
// how many runs a percentile needs), throughput and cold start, the
// measurement's verdict when the report has one, and the top findings,
// each with the command that tests it. WriteText and WriteAnalysisText
// give the rest, and the report files hold everything.
func WriteSummary(w io.Writer, r *Report) error {
	p := &printer{w: w}
	p.f("ortel bench — %s on %s (%d logical CPUs), ONNX Runtime %s, %s\n", r.Model.Name, orDash(r.Host.CPUModel), r.Host.LogicalCPUs,
		r.Runtime.ORTVersion, strings.Join(mapStrings(r.Runtime.Providers, shortProvider), ", "))
	l := r.Latency
	runs := fmt.Sprintf("%d runs", l.Count)
	if a := r.Config.AutoRuns; a != nil {
		runs = fmt.Sprintf("%d runs (--runs auto: stopped by the %s, limit %s)", l.Count, a.StoppedBy, units.Duration(a.LimitS))
	}
	if l.Errors > 0 {
		runs += fmt.Sprintf(", %d failed", l.Errors)
	}
	p.f("latency     %s, %.0f%% confidence intervals\n", runs, 100*confidenceOf(r))
	for _, pct := range summaryPercentiles {
		p.f("  %-5s     %s\n", "p"+strconv.FormatFloat(pct, 'f', -1, 64), summaryInterval(l.Summary, pct))
	}
	p.f("throughput  %.1f runs/s, %.1f items/s; cold start %s session + %s first run\n",
		r.Throughput.RunsPerS, r.Throughput.ItemsPerS, units.Duration(r.Session.CreationS), units.Duration(r.Session.FirstRunS))
	if r.Verdict != "" {
		p.f("verdict     %s\n", r.Verdict)
	}
	var fds []Finding
	if r.Analysis != nil {
		fds = r.Analysis.Findings
	}
	switch {
	case r.Analysis == nil:
		p.f("findings    none: the report has no analysis\n")
	case len(fds) == 0:
		p.f("findings    none: no rule fired\n")
	default:
		p.f("findings    %d, most important first:\n", len(fds))
	}
	for i, f := range fds {
		if i == SummaryFindings {
			p.f("  … %d more\n", len(fds)-SummaryFindings)
			break
		}
		p.f("  %d. [%s] %s\n", i+1, f.Severity, f.Title)
		if f.Check != "" {
			p.f("     test: %s\n", f.Check)
		} else {
			p.f("     → %s\n", firstSentence(f.Recommendation))
		}
	}
	return p.err
}

// summaryInterval is percentile pct with its interval, or what bounding
// it needs.
func summaryInterval(s stats.Summary, pct float64) string {
	iv, ok := s.Interval(pct)
	switch {
	case !ok:
		return units.Duration(percentileOf(s, pct))
	case iv.Sufficient:
		return fmt.Sprintf("%s  [%s, %s]", units.Duration(iv.Estimate), units.Duration(*iv.Lower), units.Duration(*iv.Upper))
	case iv.Lower != nil:
		return fmt.Sprintf("not bounded: at least %s; bounding it needs %d runs", units.Duration(*iv.Lower), iv.MinSamples)
	}
	return fmt.Sprintf("not bounded: needs %d runs", iv.MinSamples)
}

// confidenceOf is the confidence of the latency intervals (0.95 when the
// report has none).
func confidenceOf(r *Report) float64 {
	if len(r.Latency.Intervals) > 0 {
		return r.Latency.Intervals[0].Confidence
	}
	return 0.95
}

// firstSentence is s up to its first ". " (all of s when it has none).
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func mapStrings(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}
