package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// TopOperators is how many op types the text report lists.
const TopOperators = 15

// WriteText renders the report for a terminal.
func WriteText(w io.Writer, r *Report) error {
	p := &printer{w: w}
	p.f("%s\n", title(r))
	if src := sourceText(r); src != "" {
		p.f("  source    %s\n", src)
	}
	if r.Model.Path != "" || !r.FromProfile() {
		p.f("  model     %s (%s, sha256 %.12s)\n", r.Model.Path, units.Bytes(r.Model.SizeBytes), r.Model.SHA256)
	}
	for _, in := range r.Model.Inputs {
		v := ""
		if in.Value != nil {
			v = " = " + *in.Value
		}
		p.f("  input     %s %s%s (declared %s)%s\n", in.Name, in.Type, dims(in.Shape), dims(in.Declared), v)
	}
	p.f("  runtime   %s\n", runtimeText(r))
	p.f("  host      %s\n", hostText(r))
	threads := "ORT default"
	if r.Config.IntraOpThreads > 0 {
		threads = fmt.Sprint(r.Config.IntraOpThreads)
	}
	if !r.FromProfile() {
		p.f("  config    %d warm-up runs, intra-op threads %s\n", r.Config.Warmup, threads)
	}
	if so := r.Config.Session; so != nil {
		p.f("  session   %s\n", sessionText(so))
	}
	if a := r.Config.AutoRuns; a != nil {
		p.f("  runs      %s\n", AutoRunsText(a))
	}
	p.f("\n")

	if r.FromProfile() {
		p.f("%s\n\n", profileColdText(r))
	} else {
		p.f("Cold start\n")
		p.f("  session creation  %s\n", units.Duration(r.Session.CreationS))
		p.f("  first run         %s\n", units.Duration(r.Session.FirstRunS))
		p.f("\n")
	}

	l := r.Latency
	p.f("%s (%d runs", latencyHeading(r), l.Count)
	if l.Errors > 0 {
		p.f(", %d failed", l.Errors)
	}
	p.f(")\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  min\tmean\tstd\tp50\tp90\tp95\tp99\tp99.9\tmax\t\n")
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
		units.Duration(l.Min), units.Duration(l.Mean), units.Duration(l.Std), pdur(l.Summary, 50, l.P50), pdur(l.Summary, 90, l.P90), pdur(l.Summary, 95, l.P95),
		pdur(l.Summary, 99, l.P99), pdur(l.Summary, 99.9, l.P999), units.Duration(l.Max))
	tw.Flush()
	writeIntervals(p, l.Summary)
	if !r.FromProfile() {
		p.f("\n")
		p.f("Throughput\n")
		p.f("  %.1f runs/s, %.1f items/s over %s\n", r.Throughput.RunsPerS, r.Throughput.ItemsPerS, units.Duration(r.Throughput.WallS))
	}
	writeLoadText(w, p, r)
	writeTuneText(w, p, r.Tune)
	if r.Tune != nil {
		writeABText(w, p, r.Tune.Duel, "Tuning sweep: final duel, best (B) vs default configuration (A)")
	}
	writeABText(w, p, r.AB, "A/B comparison")
	writeHardwareText(p, r.Hardware)
	writeMeasurementText(p, r.Measurement)

	if o := r.Operators; o != nil && o.ProfiledRuns > 0 {
		p.f("\n")
		p.f("Top operators (%d profiled runs, %d nodes per run, %s; share %s)\n", o.ProfiledRuns, o.Nodes, passText(r), ShareBasis(o))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  op type\tprovider\tcalls\ttotal\tshare\tmean\n")
		for i, t := range o.ByType {
			if i == TopOperators {
				fmt.Fprintf(tw, "  … %d more op types\t\t\t\t\t\n", len(o.ByType)-TopOperators)
				break
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%5.1f%%\t%s\n", t.OpType, shortProvider(t.Provider), t.Calls, units.Duration(t.TotalS), 100*t.Share, units.Duration(t.MeanS))
		}
		tw.Flush()
		p.f("\n")
		p.f("Nodes per provider\n")
		provs := slices.Sorted(maps.Keys(o.NodesByProvider))
		for _, k := range provs {
			p.f("  %-28s %d\n", k, o.NodesByProvider[k])
		}
		writeArenaText(p, o)
	}

	if t := r.Telemetry; t.Mode != "" {
		p.f("\n")
		p.f("Telemetry (%s)\n", t.Mode)
		if t.Endpoint != "" {
			p.f("  sent to   %s\n", t.Endpoint)
		}
		for _, f := range t.Files {
			p.f("  wrote     %s\n", f)
		}
		if t.SpansDropped > 0 {
			p.f("  dropped   %d spans (see the collector's availability)\n", t.SpansDropped)
		}
		if t.SpansSpooled > 0 || t.MetricExportsSpooled > 0 {
			p.f("  spooled   %d spans, %d metric exports to %s (send them with ortel replay)\n", t.SpansSpooled, t.MetricExportsSpooled, t.SpoolDir)
		}
	}
	for _, n := range r.Notes {
		p.f("note: %s\n", n)
	}
	return p.err
}

// sessionText describes the session options of a report in one line.
func sessionText(so *SessionOptions) string {
	parts := []string{"optimization level " + so.OptLevel, so.ExecutionMode + " execution"}
	if len(so.Providers) > 0 {
		parts = append(parts, "providers "+strings.Join(so.Providers, ", "))
	}
	keys := slices.Sorted(maps.Keys(so.ProviderOptions))
	for _, k := range keys {
		parts = append(parts, "provider option "+k+"="+so.ProviderOptions[k])
	}
	keys = keys[:0]
	for k := range so.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+so.Config[k])
	}
	if so.SaveOptimized != "" {
		parts = append(parts, "optimized model saved to "+so.SaveOptimized)
	}
	return strings.Join(parts, ", ")
}

// pdur formats percentile pct of s, or "—" when the samples cannot
// support it (the intervals say why).
func pdur(s stats.Summary, pct, v float64) string {
	if !s.Supported(pct) {
		return "—"
	}
	return units.Duration(v)
}

// writeIntervals prints each percentile's confidence interval, or why the
// runs cannot support it.
func writeIntervals(p *printer, s stats.Summary) {
	if len(s.Intervals) == 0 {
		return
	}
	p.f("  %.0f%% confidence intervals (distribution-free, order statistics):\n", 100*s.Intervals[0].Confidence)
	for _, iv := range s.Intervals {
		name := "p" + strconv.FormatFloat(iv.Percentile, 'f', -1, 64)
		switch {
		case iv.Sufficient:
			p.f("    %-6s %s  [%s, %s]  width %.1f%%\n", name, units.Duration(iv.Estimate), units.Duration(*iv.Lower), units.Duration(*iv.Upper), 100*iv.RelWidth())
		case iv.Lower != nil:
			p.f("    %-6s insufficient runs: at least %s; bounding it needs %d runs\n", name, units.Duration(*iv.Lower), iv.MinSamples)
		default:
			p.f("    %-6s insufficient runs: needs %d runs\n", name, iv.MinSamples)
		}
	}
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, format, args...)
}

func dims(d []int64) string {
	if d == nil {
		return "[]"
	}
	parts := make([]string, len(d))
	for i, n := range d {
		if n < 0 {
			parts[i] = "?"
		} else {
			parts[i] = fmt.Sprint(n)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func shortProvider(p string) string { return strings.TrimSuffix(p, "ExecutionProvider") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeArenaText is the operator-memory view (ONNX Runtime 1.25+ profiles):
// the arena's peak and the nodes that grew it.
func writeArenaText(p *printer, o *Operators) {
	if o.ArenaPeakBytes <= 0 {
		return
	}
	p.f("\n")
	p.f("Memory arena (profiled runs): peak %s held\n", units.Bytes(o.ArenaPeakBytes))
	for _, g := range o.ArenaGrowth[:min(len(o.ArenaGrowth), 5)] {
		p.f("  +%-10s %s (%s)\n", units.Bytes(g.Bytes), g.Name, g.OpType)
	}
}
