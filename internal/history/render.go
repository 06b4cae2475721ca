package history

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// Rendering: the trend table (text), the change points with their
// attribution (text and Markdown, for a pull-request comment), and the
// HTML page (report.WriteSeriesHTML, with the report's chart code).

const timeFormat = "2006-01-02 15:04"

func (s Series) format(v float64) string { return units.Value(v, s.Metric.Unit) }

// word says which way a change went: slower, faster, more or less.
func (c Change) word(m Metric) string {
	switch {
	case m.Unit == "s" && c.Change > 0:
		return "slower"
	case m.Unit == "s":
		return "faster"
	case c.Change > 0:
		return "higher"
	}
	return "lower"
}

// Headline is a change in one line: "+47.3% slower [+38.1%, +57.0%],
// 270.1µs → 398.0µs".
func (s Series) Headline(c Change) string {
	return fmt.Sprintf("%s %s [%s, %s] at %.0f%%, %s → %s (p=%.2g)", units.Change(c.Change), c.word(s.Metric), units.Change(c.Lower), units.Change(c.Upper),
		100*c.Confidence, s.format(c.Before), s.format(c.After), c.PValue)
}

// Explanation lists what changed with c, one line each.
func (c Change) Explanation() []string {
	var out []string
	for _, st := range c.Settings {
		out = append(out, fmt.Sprintf("%s: %s → %s", st.Name, orNone(st.Before), orNone(st.After)))
	}
	if c.CommitBefore != "" || c.CommitAfter != "" {
		if c.CommitBefore == c.CommitAfter {
			out = append(out, "commit: "+c.CommitAfter+" on both sides (the change is not in the code measured)")
		} else {
			out = append(out, "commits: "+orNone(c.CommitBefore)+".."+orNone(c.CommitAfter))
		}
	}
	if len(c.Settings) == 0 {
		out = append(out, "no recorded setting changed: the code (see the commits), the model or the machine's load did")
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// WriteText writes each series as a trend table with its change points
// and what changed with them.
func WriteText(w io.Writer, series []Series) error {
	for i, s := range series {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n  %s\n  %s\n", s.Model, s.Workload, s.Machine)
		fmt.Fprintf(w, "%s (%s): %s, %s\n\n", s.Metric.Name, s.Metric.Description, report.Plural(len(s.Points), "run"), report.Plural(len(s.Changes), "change point"))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "run\ttime (UTC)\tcommit\t%s\t95%% interval\t\t\n", s.Metric.Name)
		next := 0
		for j, p := range s.Points {
			mark := ""
			if next < len(s.Changes) && s.Changes[next].Index == j {
				c := s.Changes[next]
				mark = fmt.Sprintf("\t%s %s %s", arrow(c.Change), units.Change(c.Change), c.word(s.Metric))
				next++
			}
			id := strconv.FormatInt(p.RunID, 10)
			if p.Candidate {
				id = "new"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s%s\t\n", id, p.Time.UTC().Format(timeFormat), short(p.Commit), s.format(p.V), s.interval(p.Value), mark)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, c := range s.Changes {
			fmt.Fprintf(w, "\nchange at run %s (%s UTC, %d runs before, %d after): %s\n", s.runLabel(c.Index), c.Time.UTC().Format(timeFormat), c.BeforeRuns, c.AfterRuns, s.Headline(c))
			for _, l := range c.Explanation() {
				fmt.Fprintf(w, "  %s\n", l)
			}
			if len(c.OpTypes) > 0 {
				fmt.Fprintf(w, "  op types whose self time moved most (per profiled run): %s\n", opTypeText(c.OpTypes))
			}
		}
	}
	return nil
}

func (s Series) runLabel(i int) string {
	if s.Points[i].Candidate {
		return "new"
	}
	return strconv.FormatInt(s.Points[i].RunID, 10)
}

func (s Series) interval(v Value) string {
	if v.Lower == nil || v.Upper == nil {
		return ""
	}
	return "[" + s.format(*v.Lower) + ", " + s.format(*v.Upper) + "]"
}

func arrow(change float64) string {
	if change > 0 {
		return "▲"
	}
	return "▼"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func opTypeText(ops []OpTypeChange) string {
	parts := make([]string, len(ops))
	for i, o := range ops {
		parts[i] = fmt.Sprintf("%s %s (%s → %s)", o.OpType, units.SignedDuration(o.DeltaS),
			units.Duration(o.BeforeS), units.Duration(o.AfterS))
	}
	return strings.Join(parts, ", ")
}

// WriteList writes one line per series.
func WriteList(w io.Writer, series []SeriesInfo) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "model\truns\tfirst (UTC)\tlast (UTC)\tworkload\tmachine")
	for _, s := range series {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", s.Model, s.Runs, s.First.Format(timeFormat), s.Last.Format(timeFormat), s.Workload, s.Machine)
	}
	return tw.Flush()
}

// WriteCheckText writes the gate's verdicts, one series each.
func WriteCheckText(w io.Writer, series []Series, verdicts []Verdict) error {
	for i, v := range verdicts {
		s := series[i]
		fmt.Fprintf(w, "%s: %s of %s (%s)", v.Status, s.Metric.Name, s.Model, s.Workload)
		if v.Change == nil {
			fmt.Fprintf(w, ", %s, newest %s\n", report.Plural(len(s.Points), "run"), s.format(s.Points[len(s.Points)-1].V))
			continue
		}
		fmt.Fprintf(w, " at run %s, %s ago: %s\n", s.runLabel(v.Change.Index), report.Plural(v.RunsSince, "run"), s.Headline(*v.Change))
		for _, l := range v.Change.Explanation() {
			fmt.Fprintf(w, "  %s\n", l)
		}
		if len(v.Change.OpTypes) > 0 {
			fmt.Fprintf(w, "  op types whose self time moved most (per profiled run): %s\n", opTypeText(v.Change.OpTypes))
		}
	}
	return nil
}

// WriteCheckMarkdown writes the gate's verdicts as Markdown, for a pull
// request's comment: regressions first, with what changed with them.
func WriteCheckMarkdown(w io.Writer, series []Series, verdicts []Verdict) error {
	n := map[string]int{}
	for _, v := range verdicts {
		n[v.Status]++
	}
	title := "no change"
	switch {
	case n[StatusRegression] > 0:
		title = report.Plural(n[StatusRegression], "regression")
	case n[StatusImprovement] > 0:
		title = report.Plural(n[StatusImprovement], "improvement")
	}
	fmt.Fprintf(w, "### ortel history check: %s\n\n", title)
	for _, status := range []string{StatusRegression, StatusImprovement} {
		for i, v := range verdicts {
			if v.Status != status {
				continue
			}
			s, c := series[i], v.Change
			fmt.Fprintf(w, "#### %s: %s of `%s`\n\n", strings.ToUpper(status[:1])+status[1:], s.Metric.Name, s.Model)
			fmt.Fprintf(w, "**%s %s** (%.0f%% interval %s … %s, p=%.2g): %s → %s, from run %s (%s UTC); %d runs before, %d after.\n\n",
				units.Change(c.Change), c.word(s.Metric), 100*c.Confidence, units.Change(c.Lower), units.Change(c.Upper), c.PValue,
				s.format(c.Before), s.format(c.After), s.runLabel(c.Index), c.Time.UTC().Format(timeFormat), c.BeforeRuns, c.AfterRuns)
			fmt.Fprintf(w, "Workload `%s` on `%s`.\n\n", s.Workload, s.Machine)
			writeAttributionMarkdown(w, c.Attribution)
		}
	}
	var quiet []string
	for i, v := range verdicts {
		if v.Status == StatusNoChange {
			quiet = append(quiet, fmt.Sprintf("`%s` %s (%s)", series[i].Model, series[i].Metric.Name, report.Plural(len(series[i].Points), "run")))
		}
	}
	if len(quiet) > 0 {
		fmt.Fprintf(w, "No change point: %s.\n", strings.Join(quiet, ", "))
	}
	return nil
}

func writeAttributionMarkdown(w io.Writer, a Attribution) {
	if len(a.Settings) > 0 {
		fmt.Fprintf(w, "What changed with it:\n\n| setting | before | after |\n|---|---|---|\n")
		for _, s := range a.Settings {
			fmt.Fprintf(w, "| %s | %s | %s |\n", mdCell(s.Name), mdCell(orNone(s.Before)), mdCell(orNone(s.After)))
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintf(w, "No recorded setting changed: the code, the model or the machine's load did.\n\n")
	}
	if a.CommitBefore != "" || a.CommitAfter != "" {
		fmt.Fprintf(w, "Commits: `%s..%s`\n\n", orNone(a.CommitBefore), orNone(a.CommitAfter))
	}
	if len(a.OpTypes) > 0 {
		fmt.Fprintf(w, "Op types whose self time moved most (median per profiled run):\n\n| op type | provider | before | after | change |\n|---|---|---:|---:|---:|\n")
		for _, o := range a.OpTypes {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", mdCell(o.OpType), mdCell(strings.TrimSuffix(o.Provider, "ExecutionProvider")),
				units.Duration(o.BeforeS), units.Duration(o.AfterS), units.SignedDuration(o.DeltaS))
		}
		fmt.Fprintln(w)
	}
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

// Page builds the HTML page of series: a chart of each (values, intervals,
// levels, change points), its change points and its runs.
func Page(series []Series, generator string) report.SeriesPage {
	p := report.SeriesPage{Title: "ortel history", Generator: generator}
	if len(series) > 0 {
		p.Title = "ortel history — " + series[0].Model
		p.Subtitle = fmt.Sprintf("%s, %s; generated %s UTC", series[0].Metric.Name, series[0].Metric.Description, time.Now().UTC().Format(timeFormat))
	}
	for _, s := range series {
		sec := report.SeriesSection{Heading: s.Workload + " · " + s.Machine, Chart: s.chart()}
		sec.Notes = append(sec.Notes, fmt.Sprintf("%s, %s.", report.Plural(len(s.Points), "run"), report.Plural(len(s.Changes), "change point")))
		if len(s.Changes) > 0 {
			t := report.Table{Caption: "Change points", Header: []string{"from run", "time (UTC)", "change", "interval", "before → after", "what changed with it", "op types that moved most"}}
			for _, c := range s.Changes {
				ops := ""
				if len(c.OpTypes) > 0 {
					ops = opTypeText(c.OpTypes[:min(3, len(c.OpTypes))])
				}
				t.Rows = append(t.Rows, []string{s.runLabel(c.Index), c.Time.UTC().Format(timeFormat), units.Change(c.Change) + " " + c.word(s.Metric),
					"[" + units.Change(c.Lower) + ", " + units.Change(c.Upper) + "]", s.format(c.Before) + " → " + s.format(c.After), strings.Join(c.Explanation(), "; "), ops})
			}
			sec.Tables = append(sec.Tables, t)
		}
		runs := report.Table{Caption: "Runs", Header: []string{"run", "time (UTC)", "commit", s.Metric.Name, "95% interval"}}
		for j, pt := range s.Points {
			runs.Rows = append(runs.Rows, []string{s.runLabel(j), pt.Time.UTC().Format(timeFormat), short(pt.Commit), s.format(pt.V), s.interval(pt.Value)})
		}
		sec.Tables = append(sec.Tables, runs)
		p.Sections = append(p.Sections, sec)
	}
	return p
}

func (s Series) chart() *report.SeriesChart {
	c := &report.SeriesChart{Caption: s.Metric.Name, Unit: s.Metric.Unit}
	for j, p := range s.Points {
		label := "run " + s.runLabel(j) + " " + p.Time.UTC().Format(timeFormat)
		if p.Commit != "" {
			label += " " + short(p.Commit)
		}
		c.Points = append(c.Points, report.SeriesPoint{Label: label, V: p.V, Lower: p.Lower, Upper: p.Upper, Candidate: p.Candidate})
	}
	from := 0
	for _, ch := range s.Changes {
		c.Levels = append(c.Levels, report.SeriesLevel{From: from, To: ch.Index, Level: ch.Before})
		c.Changes = append(c.Changes, report.SeriesChange{Index: ch.Index, Label: units.Change(ch.Change), Worse: ch.Worse})
		from = ch.Index
	}
	if n := len(s.Changes); n > 0 {
		c.Levels = append(c.Levels, report.SeriesLevel{From: from, To: len(s.Points), Level: s.Changes[n-1].After})
	}
	return c
}
