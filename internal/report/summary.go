package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

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
	if r.FromProfile() {
		p.f("%s\n", title(r))
		p.f("source      %s\n", sourceText(r))
	} else {
		p.f("ortel bench — %s on %s (%d logical CPUs), ONNX Runtime %s, %s\n", r.Model.Name, orDash(r.Host.CPUModel), r.Host.LogicalCPUs,
			r.Runtime.ORTVersion, strings.Join(mapStrings(r.Runtime.Providers, shortProvider), ", "))
	}
	l := r.Latency
	runs := fmt.Sprintf("%d runs in %s", l.Count, units.Duration(r.Throughput.WallS))
	if r.FromProfile() {
		runs = fmt.Sprintf("%d profiled runs (model_run events, profiler overhead included)", l.Count)
	}
	if l.Errors > 0 {
		runs += fmt.Sprintf(", %d failed", l.Errors)
	}
	p.f("latency     %s, %.0f%% confidence intervals\n", runs, 100*confidenceOf(r))
	if a := r.Config.AutoRuns; a != nil {
		p.f("            %s\n", AutoRunsText(a))
	}
	for _, pct := range summaryPercentiles {
		p.f("  %-5s     %s\n", "p"+strconv.FormatFloat(pct, 'f', -1, 64), summaryInterval(l.Summary, pct, r.Throughput.RunsPerS))
	}
	switch {
	case !r.FromProfile():
		p.f("throughput  %.1f runs/s, %.1f items/s; cold start %s session + %s first run\n",
			r.Throughput.RunsPerS, r.Throughput.ItemsPerS, units.Duration(r.Session.CreationS), units.Duration(r.Session.FirstRunS))
	case r.Session.CreationS > 0:
		p.f("cold start  %s session + %s first run (profiled); no throughput in a profile\n",
			units.Duration(r.Session.CreationS), units.Duration(r.Session.FirstRunS))
	default:
		p.f("cold start  not in run-level profiles; no throughput in a profile\n")
	}
	if r.Load != nil && r.Load.Search != nil {
		p.f("SLA search  %s\n", BracketText(r.Load.Search))
	}
	if r.Verdict != "" {
		line := r.Verdict
		if l := r.Measurement.LoadText(); l != "" {
			line += "; " + l
		}
		p.f("verdict     %s\n", line)
		if m := r.Measurement; m.Disturbed() && len(m.Advice) > 0 {
			p.f("            → %s\n", m.Advice[0])
		}
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
// it needs: how many runs and, at rate runs/s, how long.
func summaryInterval(s stats.Summary, pct, rate float64) string {
	iv, ok := s.Interval(pct)
	if !ok {
		return units.Duration(percentileOf(s, pct))
	}
	if iv.Sufficient {
		return fmt.Sprintf("%s  [%s, %s]", units.Duration(iv.Estimate), units.Duration(*iv.Lower), units.Duration(*iv.Upper))
	}
	out := "not bounded: "
	if iv.Lower != nil {
		out += fmt.Sprintf("at least %s; ", units.Duration(*iv.Lower))
	}
	out += fmt.Sprintf("bounding it needs %d runs", iv.MinSamples)
	if rate > 0 {
		d := time.Duration(float64(iv.MinSamples) / rate * float64(time.Second))
		out += fmt.Sprintf(", about %s here (--duration %s)", units.Duration(d.Seconds()), roundUp(d))
	}
	return out
}

// roundUp rounds d up to a duration a person would type: whole seconds
// under a minute ("40s"), whole minutes above ("5m").
func roundUp(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int64((d+time.Second-1)/time.Second))
	}
	return fmt.Sprintf("%dm", int64((d+time.Minute-1)/time.Minute))
}

// AutoRunsText says what --runs auto did: how many runs it took and why it
// stopped, and under its time cap what the cap allowed.
func AutoRunsText(a *AutoRuns) string {
	pct := "p" + strconv.FormatFloat(a.Percentile, 'f', -1, 64)
	width := pct + " not bounded on both sides"
	if a.Width != nil {
		width = fmt.Sprintf("%s's interval %.1f%% of it wide", pct, 100**a.Width)
	}
	target := fmt.Sprintf("target %g%%", 100*a.TargetWidth)
	switch a.StoppedBy {
	case "width":
		return fmt.Sprintf("--runs auto: %s after %d runs (%s)", width, a.Runs, target)
	case "time limit":
		return fmt.Sprintf("--runs auto: its %s cap allowed %d runs, %s (%s; a longer --duration narrows it)", units.Duration(a.LimitS), a.Runs, width, target)
	}
	return fmt.Sprintf("--runs auto: stopped by the %s after %d runs, %s (%s)", a.StoppedBy, a.Runs, width, target)
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
