package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// curveShown is how many warm-up curve points the text report prints.
const curveShown = 12

// writeLoadText renders the sections of load.go: warm-up, load scenario,
// SLA and its search, jitter, batch sweep, generation.
func writeLoadText(w io.Writer, p *printer, r *Report) {
	if wu := r.Warmup; wu != nil {
		writeWarmup(p, wu)
	}
	if l := r.Load; l != nil && (l.Scenario != "single-stream" || l.SLA != nil) {
		writeLoad(w, p, l)
	}
	if j := r.Jitter; j != nil {
		writeJitter(p, j)
	}
	if s := r.BatchSweep; s != nil {
		writeSweep(w, p, s)
	}
	if g := r.Generation; g != nil {
		writeGeneration(w, p, g)
	}
}

func writeWarmup(p *printer, wu *Warmup) {
	p.f("\n")
	p.f("Warm-up\n")
	if wu.ModelLoadS > 0 || wu.InitializationS > 0 {
		p.f("  session load      %s, initialization %s (ONNX Runtime's profiler)\n", units.Duration(wu.ModelLoadS), units.Duration(wu.InitializationS))
	}
	runs := fmt.Sprintf("%d", wu.Runs)
	if wu.Mode == "auto" {
		runs += fmt.Sprintf(" (auto, at most %d)", wu.MaxRuns)
	}
	p.f("  warm-up runs      %s\n", runs)
	if wu.Steady {
		p.f("  steady state      after %s (%s), median %s; seen after %s\n",
			Plural(wu.SteadyAfterRuns, "run"), units.Duration(wu.SteadyS), units.Duration(wu.SteadyMedianS), Plural(wu.DetectedAfterRuns, "run"))
	} else {
		p.f("  steady state      not reached (%d-run windows, medians within %.0f%%)\n", wu.Window, 100*wu.Tolerance)
	}
	if len(wu.CurveS) > 0 {
		n := min(len(wu.CurveS), curveShown)
		parts := make([]string, n)
		for i, v := range wu.CurveS[:n] {
			parts[i] = units.Duration(v)
		}
		more := ""
		if len(wu.CurveS) > n {
			more = fmt.Sprintf(" … (%d runs)", len(wu.CurveS))
		}
		p.f("  curve             %s%s\n", strings.Join(parts, " "), more)
	}
}

func writeLoad(w io.Writer, p *printer, l *Load) {
	p.f("\n")
	sessions := "one shared session"
	if l.Sessions == "per-worker" {
		sessions = "a session per worker"
	}
	p.f("Load: %s scenario, %s, %s; latency from %s\n", l.Scenario, Plural(l.Concurrency, "worker"), sessions, strings.ReplaceAll(l.LatencyFrom, "_", " "))
	if l.TargetQPS > 0 {
		p.f("  target    %.4g requests/s (Poisson arrivals)\n", l.TargetQPS)
	}
	p.f("  achieved  %.4g requests/s, %.4g items/s; %d of %d requests done", l.AchievedQPS, l.ItemsPerS, l.Completed, l.Requests)
	if l.Errors > 0 {
		p.f(", %d failed,", l.Errors)
	}
	p.f(" in %s\n", units.Duration(l.WallS))
	if q := l.QueueWait; q != nil {
		p.f("  queueing  wait p50 %s, p99 %s, max %s; deepest queue %d\n", pdur(*q, 50, q.P50), pdur(*q, 99, q.P99), units.Duration(q.Max), l.MaxQueueDepth)
	}
	if s := l.SLA; s != nil {
		p.f("  SLA       %s\n", slaText(s))
	}
	if s := l.Search; s != nil {
		writeSearch(w, p, s)
	}
}

// BracketText is the search's result in one line: the bracket with its
// confidence, the percentile judged, the time it took of its budget.
func BracketText(s *SLASearch) string {
	pct := "p" + strconv.FormatFloat(s.Percentile, 'f', -1, 64)
	if s.Percentile == 0 {
		pct = "the SLA's percentile"
	}
	var out string
	switch {
	case s.Status == "not provable in budget":
		out = "not provable in budget"
	case s.Status == "missed without load":
		out = fmt.Sprintf("no rate meets %s: one request at a time already misses it", pct)
	case s.Found && s.UpperQPS > 0:
		out = fmt.Sprintf("peak rate between %.4g requests/s (met) and %.4g (missed) at %s", s.PeakQPS, s.UpperQPS, pct)
	case s.Found:
		out = fmt.Sprintf("peak rate at least %.4g requests/s (met at %s; no rate proven to miss it)", s.PeakQPS, pct)
	case s.UpperQPS > 0:
		out = fmt.Sprintf("peak rate below %.4g requests/s (missed at %s; no rate proven to meet it)", s.UpperQPS, pct)
	default:
		out = fmt.Sprintf("no trial proved %s met or missed", pct)
	}
	if s.Confidence > 0 {
		out += fmt.Sprintf(", %.0f%% confidence", 100*s.Confidence)
	}
	out += fmt.Sprintf("; %s", Plural(len(s.Trials), "trial"))
	if s.Disturbed > 0 {
		out += fmt.Sprintf(" (%d disturbed)", s.Disturbed)
	}
	if s.BudgetS > 0 {
		out += fmt.Sprintf(" in %s of a %s budget", roundS(s.ElapsedS), roundS(s.BudgetS))
	}
	return out
}

// roundS is seconds as a duration to the second ("2m52s").
func roundS(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// TrialPercentileText is a trial's judged percentile with its interval:
// "p99 182ms (95% interval 170ms–199ms)".
func TrialPercentileText(t Trial) string {
	out := fmt.Sprintf("p%g ", t.SLA.Percentile)
	if t.SLA.ObservedS == nil {
		out += "a failed request"
	} else {
		out += units.Duration(*t.SLA.ObservedS)
	}
	if iv := t.Interval; iv != nil {
		lo, hi := "…", "…"
		if iv.Lower != nil {
			lo = units.Duration(*iv.Lower)
		}
		if iv.Upper != nil {
			hi = units.Duration(*iv.Upper)
		}
		out += fmt.Sprintf(" (%.0f%% interval %s–%s)", 100*iv.Confidence, lo, hi)
	}
	return out
}

func writeSearch(w io.Writer, p *printer, s *SLASearch) {
	p.f("\n")
	p.f("SLA search: %s\n", BracketText(s))
	if s.ClosedLoopQPS > 0 {
		p.f("  closed loop %.4g requests/s; queue model's prediction %.4g requests/s\n", s.ClosedLoopQPS, s.PredictedQPS)
	}
	pct := "p99"
	if len(s.Trials) > 0 && s.Trials[0].SLA.Percentile > 0 {
		pct = fmt.Sprintf("p%g", s.Trials[0].SLA.Percentile)
	}
	if len(s.Trials) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  target/s\tachieved/s\trequests\ttime\tp50\t%s\tinterval\tviolations\tverdict\t\n", pct)
		for _, t := range s.Trials {
			verdict := t.Outcome()
			if t.Repeat {
				verdict += ", repeat"
			}
			if t.Probe {
				verdict += ", probe"
			}
			obs := "failed"
			if t.SLA.ObservedS != nil {
				obs = units.Duration(*t.SLA.ObservedS)
			}
			iv := "-"
			if t.Interval != nil {
				lo, hi := "…", "…"
				if t.Interval.Lower != nil {
					lo = units.Duration(*t.Interval.Lower)
				}
				if t.Interval.Upper != nil {
					hi = units.Duration(*t.Interval.Upper)
				}
				iv = lo + "–" + hi
			}
			fmt.Fprintf(tw, "  %.4g\t%.4g\t%d/%d\t%s\t%s\t%s\t%s\t%d\t%s\t\n", t.TargetQPS, t.AchievedQPS, t.Completed, t.Planned,
				units.Duration(t.WallS), units.Duration(t.P50S), obs, iv, t.SLA.Violations, verdict)
		}
		tw.Flush()
	}
	// The first disturbed trial's reasons; every trial's are in
	// report.json.
	for _, t := range s.Trials {
		if t.Disturbance != "" {
			p.f("  disturbed at %.4g requests/s: %s\n", t.TargetQPS, t.Disturbance)
			if s.Disturbed > 1 {
				p.f("  (%d trials disturbed; each one's reasons are in report.json)\n", s.Disturbed)
			}
			break
		}
	}
	if s.Note != "" {
		p.f("  note: %s\n", s.Note)
	}
}

func slaText(s *SLAResult) string {
	verdict := "met"
	if !s.Met {
		verdict = "MISSED"
	}
	obs := "a failed request"
	if s.ObservedS != nil {
		obs = units.Duration(*s.ObservedS)
	}
	out := fmt.Sprintf("p%g ≤ %s: %s (p%g %s; %d of %d requests over, compliance %.2f%%)",
		s.Percentile, units.Duration(s.ThresholdS), verdict, s.Percentile, obs, s.Violations, s.Requests, 100*s.Compliance)
	if v := earlyStoppingText(s); v != "" {
		out += "\n            " + v
	}
	return out
}

// earlyStoppingText states the early-stopping verdict and whether the run
// had enough requests for it; "" for reports without one.
func earlyStoppingText(s *SLAResult) string {
	conf := fmt.Sprintf("%g%%", 100*s.Confidence)
	switch s.Verdict {
	case "":
		return ""
	case "met", "missed":
		return fmt.Sprintf("at %s confidence (LoadGen early stopping): %s, with enough requests", conf, s.Verdict)
	}
	if s.RequestsNeeded > 0 {
		return fmt.Sprintf("at %s confidence (LoadGen early stopping): undecided, not enough requests: %d needed with %d over",
			conf, s.RequestsNeeded, s.Violations)
	}
	return fmt.Sprintf("at %s confidence (LoadGen early stopping): undecided, not enough requests; the share over the threshold is at the limit", conf)
}

func writeJitter(p *printer, j *Jitter) {
	p.f("\n")
	p.f("Jitter\n")
	p.f("  std %s, p99/p50 %.2f, consecutive delta max %s (mean %s)\n", units.Duration(j.StdS), j.TailRatio, units.Duration(j.MaxDeltaS), units.Duration(j.MeanDeltaS))
	p.f("  outliers  %d above %s (median + %g robust std)\n", j.OutlierCount, units.Duration(j.ThresholdS), j.K)
	const shown = 10
	for i, o := range j.Outliers {
		if i == shown {
			p.f("            … %d more in the JSON report\n", len(j.Outliers)-shown)
			break
		}
		p.f("            run %d at %s: %s\n", o.Run, units.Duration(o.OffsetS), units.Duration(o.LatencyS))
	}
}

func writeSweep(w io.Writer, p *printer, s *BatchSweep) {
	p.f("\n")
	best := "none"
	if s.BestBatch > 0 {
		best = fmt.Sprint(s.BestBatch)
	}
	p.f("Batch sweep (against batch %d; best batch %s: %s)\n", s.ReferenceBatch, best, s.BestRule)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  batch\tp50\tp99\truns/s\titems/s\tspeedup\tefficiency\tSLA\t\n")
	for _, st := range s.Steps {
		sla := "-"
		if st.SLA != nil {
			sla = "met"
			if !st.SLA.Met {
				sla = "missed"
			}
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%.1f\t%.1f\t%.2fx\t%.0f%%\t%s\t\n", st.Batch, pdur(st.Latency, 50, st.Latency.P50), pdur(st.Latency, 99, st.Latency.P99),
			st.RunsPerS, st.ItemsPerS, st.Speedup, 100*st.Efficiency, sla)
	}
	tw.Flush()
}

func writeGeneration(w io.Writer, p *printer, g *Generation) {
	v := newGenView(g)
	p.f("\n")
	p.f("Generation: %s\n", v.Heading)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  \tmin\tp50\tp90\tp99\tmax\t\n")
	row := func(name string, s stats.Summary) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t\n", name, units.Duration(s.Min), pdur(s, 50, s.P50), pdur(s, 90, s.P90), pdur(s, 99, s.P99), units.Duration(s.Max))
	}
	row("time to first token", g.TTFT)
	if g.TPOT.Count > 0 {
		row("time per output token", g.TPOT)
	}
	tw.Flush()
	p.f("  throughput  %s\n", v.TokensPerS)
	p.f("  KV cache  %s\n", v.KVCache)
	if v.EncoderStates != "" {
		p.f("  encoder states  %s\n", v.EncoderStates)
	}
	if g.TTFT.Count > 0 && len(g.TTFT.Intervals) > 0 {
		p.f("  time to first token\n")
		writeIntervals(p, g.TTFT)
	}
	if g.TPOT.Count > 0 && len(g.TPOT.Intervals) > 0 {
		p.f("  time per output token (one value per generation)\n")
		writeIntervals(p, g.TPOT)
	}
	if len(v.Steps) > 0 {
		p.f("  KV cache held after each token of the first measured generation\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  after token\tKV cache\tadded\t\n")
		for _, r := range v.stepRows() {
			fmt.Fprintf(tw, "  %s\t\n", strings.Join(r, "\t"))
		}
		tw.Flush()
	}
}

// Plural is "1 node" or "3 nodes": n and what, with an s when n is not 1.
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
