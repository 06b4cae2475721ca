package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// TuneRowsShown is how many sweep rows the text report lists.
const TuneRowsShown = 20

// writeTuneText renders the tuning sweep: one row per configuration,
// fastest first, the best with its interval and the command reproducing it.
func writeTuneText(w io.Writer, p *printer, t *Tune) {
	if t == nil {
		return
	}
	p.f("\n")
	p.f("Tuning sweep (%s, %d runs each in %d interleaved rounds; p50 with its 95%% order-statistic interval)\n",
		Plural(len(t.Rows), "configuration"), t.RunsPerConfig, t.Rounds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tconfiguration\tp50 [95%% interval]\tp99\truns/s\tsession creation\t\n")
	for i, r := range t.Rows {
		if i == TuneRowsShown {
			fmt.Fprintf(tw, "  …\t%d more in the JSON report\t\t\t\t\t\n", len(t.Rows)-TuneRowsShown)
			break
		}
		mark := ""
		switch {
		case i == t.Best:
			mark = " ← best"
		case containsInt(t.TiedWith, i):
			mark = " (tied with the best)"
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "  %d\t%s\tfailed: %s\t\t\t\t\n", i+1, r.Label, r.Error)
			continue
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s%s\t%s\t%.1f\t%s\t\n", i+1, r.Label, IntervalText(r.P50), mark,
			pdur(r.Latency, 99, r.Latency.P99), r.RunsPerS, units.Duration(r.CreationS))
	}
	tw.Flush()
	if t.Best < 0 {
		p.f("  no configuration had enough successful runs to rank (give each more with --runs)\n")
		return
	}
	b := t.Rows[t.Best]
	p.f("  best      %s: p50 %s (%s)\n", b.Label, IntervalText(b.P50), t.Rule)
	if t.RunnerUp >= 0 {
		r := t.Rows[t.RunnerUp]
		if t.Distinguishable {
			p.f("  runner-up %s: p50 %s; the intervals do not overlap, so the best is faster at 95%% confidence\n", r.Label, IntervalText(r.P50))
		} else {
			verb := "overlap"
			if len(t.TiedWith) == 1 {
				verb = "overlaps"
			}
			p.f("  runner-up %s: p50 %s; the intervals overlap: the best is not distinguishable from it (%s %s the best; more --runs narrow the intervals)\n",
				r.Label, IntervalText(r.P50), Plural(len(t.TiedWith), "configuration"), verb)
		}
	}
	if t.Command != "" {
		p.f("  reproduce %s\n", t.Command)
	}
}

// IntervalText formats a latency percentile interval: "12.3ms [12.0ms,
// 12.9ms]", or the estimate marked when the runs cannot bound it.
func IntervalText(iv stats.Interval) string {
	if !iv.Sufficient {
		return fmt.Sprintf("%s (insufficient runs, %d needed)", units.Duration(iv.Estimate), iv.MinSamples)
	}
	return fmt.Sprintf("%s [%s, %s]", units.Duration(iv.Estimate), units.Duration(*iv.Lower), units.Duration(*iv.Upper))
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// writeTuneMarkdown renders the tuning sweep as a Markdown table.
func writeTuneMarkdown(p *printer, t *Tune) {
	if t == nil || len(t.Rows) == 0 {
		return
	}
	p.f("### Tuning sweep\n\n%d runs per configuration in %d interleaved rounds; p50 with its 95%% order-statistic interval.\n\n", t.RunsPerConfig, t.Rounds)
	p.f("| # | configuration | p50 [95%% interval] | runs/s | session creation |\n|---:|---|---|---:|---:|\n")
	for i, r := range t.Rows {
		lat := "failed: " + r.Error
		if r.Error == "" {
			lat = IntervalText(r.P50)
		}
		if i == t.Best {
			lat += " **best**"
		}
		p.f("| %d | %s | %s | %.1f | %s |\n", i+1, r.Label, lat, r.RunsPerS, units.Duration(r.CreationS))
	}
	p.f("\n")
	if t.Best >= 0 && t.RunnerUp >= 0 {
		if t.Distinguishable {
			p.f("The best is faster than the runner-up at 95%% confidence (the intervals do not overlap).")
		} else {
			p.f("The best is not distinguishable from the runner-up (the intervals overlap).")
		}
	}
	if t.Command != "" {
		p.f(" Reproduce: `%s`", t.Command)
	}
	p.f("\n\n")
}
