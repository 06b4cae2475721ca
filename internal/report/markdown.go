package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/internal/units"
)

// WriteMarkdown renders the report as GitHub-flavoured Markdown: the run's
// context, latency, throughput, operators, load sections present,
// roofline, findings and energy, as tables a pull request or wiki shows.
func WriteMarkdown(w io.Writer, r *Report) error {
	p := &printer{w: w}
	p.f("# ortel report — %s\n\n", mdEsc(r.Model.Name))
	p.f("| | |\n|---|---|\n")
	if src := sourceText(r); src != "" {
		p.f("| source | %s |\n", mdEsc(src))
	}
	if r.Model.Path != "" || !r.FromProfile() {
		p.f("| model | `%s` (%s, sha256 `%.12s`) |\n", mdCode(r.Model.Path), units.Bytes(r.Model.SizeBytes), r.Model.SHA256)
	}
	for _, in := range r.Model.Inputs {
		p.f("| input | `%s` %s%s |\n", mdCode(in.Name), in.Type, dims(in.Shape))
	}
	p.f("| runtime | %s |\n", mdEsc(runtimeText(r)))
	p.f("| host | %s |\n", mdEsc(hostText(r)))
	p.f("| created | %s by %s %s |\n\n", r.CreatedAt.Format("2006-01-02 15:04:05 MST"), r.Tool.Name, r.Tool.Version)

	if r.FromProfile() {
		p.f("## %s\n\n", latencyHeading(r))
	} else {
		p.f("## Latency\n\n")
	}
	l := r.Latency
	p.f("| runs | min | mean | std | p50 | p90 | p95 | p99 | p99.9 | max |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	p.f("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n\n", l.Count, units.Duration(l.Min), units.Duration(l.Mean), units.Duration(l.Std), pdur(l.Summary, 50, l.P50), pdur(l.Summary, 90, l.P90),
		pdur(l.Summary, 95, l.P95), pdur(l.Summary, 99, l.P99), pdur(l.Summary, 99.9, l.P999), units.Duration(l.Max))
	for _, iv := range l.Intervals {
		if !iv.Sufficient {
			p.f("p%g: insufficient runs (— above): bounding it at %.0f%% confidence needs %d runs.\n\n", iv.Percentile, 100*iv.Confidence, iv.MinSamples)
		}
	}
	if l.Errors > 0 {
		p.f("%d runs failed.\n\n", l.Errors)
	}
	if r.FromProfile() {
		p.f("%s\n\n", mdEsc(profileColdText(r)))
	} else {
		p.f("Cold start: session creation %s, first run %s. Throughput: %.1f runs/s, %.1f items/s over %s.\n\n",
			units.Duration(r.Session.CreationS), units.Duration(r.Session.FirstRunS), r.Throughput.RunsPerS, r.Throughput.ItemsPerS, units.Duration(r.Throughput.WallS))
	}
	if wu := r.Warmup; wu != nil && len(wu.CurveS) > 0 {
		p.f("Warm-up (%s): %d runs", wu.Mode, wu.Runs)
		if wu.Steady {
			p.f(", steady after %d runs (median %s)", wu.SteadyAfterRuns, units.Duration(wu.SteadyMedianS))
		} else {
			p.f(", not steady within them")
		}
		p.f(".\n\n")
	}
	if j := r.Jitter; j != nil {
		p.f("Jitter: std %s, p99/p50 %.2f, max consecutive delta %s, %d outliers above %s.\n\n", units.Duration(j.StdS), j.TailRatio, units.Duration(j.MaxDeltaS), j.OutlierCount, units.Duration(j.ThresholdS))
	}
	if ld := r.Load; ld != nil {
		p.f("Load scenario %s: concurrency %d, %.1f QPS achieved", ld.Scenario, ld.Concurrency, ld.AchievedQPS)
		if ld.TargetQPS > 0 {
			p.f(" of %.1f targeted", ld.TargetQPS)
		}
		p.f(", %d/%d requests completed, %d errors.\n\n", ld.Completed, ld.Requests, ld.Errors)
	}
	if b := r.BatchSweep; b != nil && len(b.Steps) > 0 {
		p.f("### Batch sweep\n\n| batch | items/s | p50 | p99 | speed-up | efficiency |\n|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range b.Steps {
			mark := ""
			if s.Batch == b.BestBatch {
				mark = " **best**"
			}
			p.f("| %d%s | %.1f | %s | %s | %.2f | %.2f |\n", s.Batch, mark, s.ItemsPerS, pdur(s.Latency, 50, s.Latency.P50), pdur(s.Latency, 99, s.Latency.P99), s.Speedup, s.Efficiency)
		}
		p.f("\n")
	}

	if g := r.Generation; g != nil {
		writeGenerationMarkdown(p, g)
	}
	writeTuneMarkdown(p, r.Tune)
	if r.Tune != nil {
		writeABMarkdown(p, r.Tune.Duel, "Tuning sweep: final duel, best (B) vs default configuration (A)")
	}
	writeABMarkdown(p, r.AB, "A/B comparison")

	if o := r.Operators; o != nil && o.ProfiledRuns > 0 {
		p.f("## Operators\n\n%s (%s), %d nodes per run", Plural(o.ProfiledRuns, "profiled run"), passText(r), o.Nodes)
		provs := make([]string, 0, len(o.NodesByProvider))
		for k, n := range o.NodesByProvider {
			provs = append(provs, fmt.Sprintf("%s %d", shortProvider(k), n))
		}
		sort.Strings(provs)
		p.f(" (%s).\n\n", strings.Join(provs, ", "))
		p.f("Share %s.\n\n", ShareBasis(o))
		p.f("| op type | provider | calls | total | share | mean |\n|---|---|---:|---:|---:|---:|\n")
		for i, t := range o.ByType {
			if i == TopOperators {
				p.f("| … %d more | | | | | |\n", len(o.ByType)-TopOperators)
				break
			}
			p.f("| %s | %s | %d | %s | %.1f%% | %s |\n", mdEsc(t.OpType), shortProvider(t.Provider), t.Calls, units.Duration(t.TotalS), 100*t.Share, units.Duration(t.MeanS))
		}
		p.f("\n")
	}

	writeMeasurementMarkdown(p, r.Measurement)
	if h := r.Hardware; h != nil {
		writeHardwareMarkdown(p, h)
	}

	if a := r.Analysis; a != nil {
		p.f("## Roofline\n\n")
		if pk := a.Peaks; pk != nil {
			p.f("Machine peaks: %s (%s), %s (%s); ridge point %.2f FLOP/byte.\n\n", units.Rate(pk.FLOPsPerS, "FLOP/s"), pk.FLOPsSource, units.Rate(pk.BytesPerS, "B/s"), pk.BytesSource, pk.Ridge)
			mdRoofs(p, pk)
		} else {
			p.f("No machine peaks: operators are not classified.\n\n")
		}
		if rf := a.Roofline; rf != nil {
			if b := ShareBasis(r.Operators); b != "" {
				p.f("Share %s, as in Operators.\n\n", b)
			}
			p.f("| op type | provider | nodes | share | FLOP/s | bytes/s | FLOP/byte | bound | vs roof | of roof |\n|---|---|---:|---:|---:|---:|---:|---|---|---:|\n")
			for i, t := range rf.ByOpType {
				if i == TopRoofline {
					p.f("| … %d more | | | | | | | | | |\n", len(rf.ByOpType)-TopRoofline)
					break
				}
				p.f("| %s | %s | %d | %.1f%% | %s | %s | %s | %s | %s | %s |\n", mdEsc(t.OpType), shortProvider(t.Provider), t.Nodes, 100*t.Share,
					optRate(t.FLOPsPerS, "FLOP/s"), units.Rate(t.BytesPerS, "B/s"), optNum(t.Intensity), t.Bound, orDash(t.Roof), optPct(t.RoofShare))
			}
			p.f("\nFLOPs known for %d of %d nodes (%.1f%% of operator time)", rf.KnownNodes, rf.Nodes, 100*rf.KnownTimeShare)
			if len(rf.UnknownOpTypes) > 0 {
				p.f("; unknown: %s", strings.Join(rf.UnknownOpTypes, ", "))
			}
			p.f(".\n\n")
			mdAboveRoof(p, rf)
		} else {
			p.f("No roofline: the run has no operator profile.\n\n")
		}
		writePlacementMarkdown(p, a.Providers)
		p.f("## Findings\n\n")
		if len(a.Findings) == 0 {
			p.f("No rule fired.\n\n")
		}
		for i, f := range a.Findings {
			p.f("%d. **[%s] %s** (`%s`)  \n   %s  \n   → %s  \n   <sub>%s</sub>\n", i+1, f.Severity, mdEsc(f.Title), f.Rule, mdEsc(f.Detail), mdEsc(f.Recommendation), mdEsc(evidenceLine(f.Evidence)))
		}
		p.f("\n## Energy\n\n")
		e := a.Energy
		if !e.Available {
			p.f("**Unavailable:** %s\n\n", mdEsc(e.Reason))
		} else {
			p.f("| per inference | above idle | inferences/J | avg W | max W | GFLOP/s per W | gCO2e / 1000 inferences |\n|---:|---:|---:|---:|---:|---:|---:|\n")
			dyn := "-"
			if e.DynamicJoulesPerInference != nil {
				dyn = units.Energy(*e.DynamicJoulesPerInference)
			}
			p.f("| %s | %s | %.3g | %.2f | %.2f | %s | %s |\n\n", units.Energy(e.JoulesPerInference), dyn, e.InferencesPerJoule, e.AvgW, e.MaxW, optNum(e.GFLOPsPerWatt), optNum(e.Carbon.GramsPer1000))
			p.f("| source | type | per inference | avg W | max W | in total |\n|---|---|---:|---:|---:|---|\n")
			for _, s := range e.Sources {
				p.f("| %s | %s | %s | %.2f | %.2f | %v |\n", mdEsc(s.Name), s.Type, units.Energy(s.JoulesPerInference), s.AvgW, s.MaxW, s.InTotal)
			}
			p.f("\n")
		}
		p.f("Grid carbon intensity: %g gCO2e/kWh (%s).\n\n", e.Carbon.GridIntensity, mdEsc(e.Carbon.GridSource))
		for _, n := range a.Notes {
			p.f("- note: %s\n", mdEsc(n))
		}
		if len(a.Notes) > 0 {
			p.f("\n")
		}
	}
	for _, n := range r.Notes {
		p.f("- %s\n", mdEsc(n))
	}
	return p.err
}

func writeHardwareMarkdown(p *printer, h *Hardware) {
	p.f("## Hardware\n\nSampled every %s over %s (%s).", units.Duration(h.IntervalS), units.Duration(h.WallS), Plural(h.Inferences, "run"))
	if c := h.CPU; c != nil {
		p.f(" Host CPU %.1f%% mean, %.1f%% max of %d CPUs.", 100*c.UtilizationMean, 100*c.UtilizationMax, c.LogicalCPUs)
	}
	if pr := h.Process; pr != nil {
		p.f(" Process CPU %.1f%% mean, peak RSS %s.", 100*pr.CPUUtilizationMean, units.Bytes(int64(pr.PeakRSSBytes)))
	}
	for _, g := range h.GPUs {
		p.f(" GPU %s (%s) %.1f%% busy.", mdEsc(g.Name), mdEsc(g.ID), 100*g.UtilizationMean)
	}
	for _, t := range h.Temperatures {
		p.f(" %s up to %.0f °C.", mdEsc(t.Name), t.MaxCelsius)
	}
	p.f("\n\n")
	if len(h.Sources) > 0 {
		p.f("| source | available | reason |\n|---|---|---|\n")
		for _, s := range h.Sources {
			p.f("| %s | %v | %s |\n", s.Source, s.Available, mdEsc(s.Reason))
		}
		p.f("\n")
	}
}

// mdEsc escapes the characters that would break a Markdown table cell or
// start markup.
func mdEsc(s string) string {
	return mdReplacer.Replace(s)
}

// mdCode makes s safe inside a code span in a table cell.
func mdCode(s string) string { return strings.NewReplacer("`", "'", "|", `\|`, "\n", " ").Replace(s) }

var mdReplacer = strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "'")
