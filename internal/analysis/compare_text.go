package analysis

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ortel-dev/ortel/internal/units"
)

// TopOpTypeDeltas is how many op types the rendered comparison lists.
const TopOpTypeDeltas = 10

// WriteComparisonText renders a comparison for a terminal.
func WriteComparisonText(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "ortel compare — B %s against A %s\n", c.B.Label, c.A.Label)
	fmt.Fprintf(ew, "  A  %s, %d samples, %s%s\n", c.A.Model, c.A.Samples, c.A.CreatedAt, measurementSuffix(c.A))
	fmt.Fprintf(ew, "  B  %s, %d samples, %s%s\n\n", c.B.Model, c.B.Samples, c.B.CreatedAt, measurementSuffix(c.B))
	fmt.Fprintf(ew, "Latency (change = B/A - 1; %.0f%% bootstrap CI, %d resamples)\n", 100*c.Confidence, c.Resamples)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  stat\tA\tB\tchange\tCI low\tCI high\t\t\n")
	for _, d := range c.Latency {
		sig := ""
		switch {
		case d.InsufficientRuns:
			sig = "insufficient runs"
		case d.Significant:
			sig = "significant"
		}
		mark := ""
		if d.Stat == c.Percentile {
			mark = "← verdict"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%+.1f%%\t%+.1f%%\t%+.1f%%\t%s\t%s\t\n", d.Stat, units.Duration(d.AS), units.Duration(d.BS), 100*d.Change, 100*d.CILow, 100*d.CIHigh, sig, mark)
	}
	tw.Flush()
	writeIntervalsText(ew, c)
	fmt.Fprintf(ew, "\nThroughput  %.1f → %.1f items/s (%+.1f%%)\n", c.Throughput.A, c.Throughput.B, 100*c.Throughput.Change)
	if c.Energy != nil {
		fmt.Fprintf(ew, "Energy      %.4g → %.4g J per inference (%+.1f%%)\n", c.Energy.A, c.Energy.B, 100*c.Energy.Change)
	} else {
		fmt.Fprintf(ew, "Energy      not compared: energy was not measured in both runs\n")
	}
	if len(c.OpTypes) > 0 {
		fmt.Fprintf(ew, "\nOp types (time per profiled run, largest changes first)\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  op type\tA\tB\tdelta\tchange\n")
		for i, d := range c.OpTypes {
			if i == TopOpTypeDeltas {
				fmt.Fprintf(tw, "  … %d more\t\t\t\t\n", len(c.OpTypes)-TopOpTypeDeltas)
				break
			}
			ch := "new/gone"
			if d.Change != nil {
				ch = units.Change(*d.Change)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", d.OpType, units.Duration(d.AS), units.Duration(d.BS), units.SignedDuration(d.DeltaS), ch)
		}
		tw.Flush()
	}
	writePlacementDelta(ew, c.Placement, false)
	for _, warn := range c.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", warn)
	}
	fmt.Fprintf(ew, "\nVerdict: %s\n", Headline(c))
	if c.Regression != nil {
		fmt.Fprintf(ew, "Gate:    %s\n", c.Regression.Reason)
	}
	return ew.err
}

// WriteComparisonMarkdown renders a comparison as Markdown, for a pull
// request comment.
func WriteComparisonMarkdown(w io.Writer, c *Comparison) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "## ortel compare: %s\n\n", Headline(c))
	fmt.Fprintf(ew, "A: `%s` (%s, %d samples) · B: `%s` (%s, %d samples)\n\n", c.A.Label, c.A.Model, c.A.Samples, c.B.Label, c.B.Model, c.B.Samples)
	fmt.Fprintf(ew, "| stat | A | B | change | %.0f%% CI | significant |\n|---|---:|---:|---:|---:|---|\n", 100*c.Confidence)
	for _, d := range c.Latency {
		fmt.Fprintf(ew, "| %s | %s | %s | %+.1f%% | %+.1f%% … %+.1f%% | %v |\n", d.Stat, units.Duration(d.AS), units.Duration(d.BS), 100*d.Change, 100*d.CILow, 100*d.CIHigh, d.Significant)
	}
	writeIntervalsText(ew, c)
	fmt.Fprintf(ew, "\nThroughput: %.1f → %.1f items/s (%+.1f%%).", c.Throughput.A, c.Throughput.B, 100*c.Throughput.Change)
	if c.Energy != nil {
		fmt.Fprintf(ew, " Energy: %.4g → %.4g J per inference (%+.1f%%).", c.Energy.A, c.Energy.B, 100*c.Energy.Change)
	}
	fmt.Fprintf(ew, "\n\n")
	if len(c.OpTypes) > 0 {
		fmt.Fprintf(ew, "| op type | A | B | delta |\n|---|---:|---:|---:|\n")
		for i, d := range c.OpTypes {
			if i == TopOpTypeDeltas {
				break
			}
			fmt.Fprintf(ew, "| %s | %s | %s | %s |\n", d.OpType, units.Duration(d.AS), units.Duration(d.BS), units.SignedDuration(d.DeltaS))
		}
		fmt.Fprintf(ew, "\n")
	}
	writePlacementDelta(ew, c.Placement, true)
	for _, warn := range c.Warnings {
		fmt.Fprintf(ew, "- warning: %s\n", warn)
	}
	if c.Regression != nil {
		fmt.Fprintf(ew, "\n**Gate:** %s\n", c.Regression.Reason)
	}
	return ew.err
}

// measurementSuffix is ", measurement stable" or the like, when known.
func measurementSuffix(r RunInfo) string {
	if r.Measurement == "" {
		return ""
	}
	return ", measurement " + r.Measurement
}

// Headline is the comparison's verdict in one line, led by its worst
// significant change: the verdict on the comparison's percentile alone
// ("B is not significantly different (p50)") when no other statistic is
// significantly slower, else every significantly slower statistic with
// the largest change, then the verdict's percentile when it is not among
// them ("B is slower at p90, p95, p99 (worst p99 +71.0%); p50, the
// verdict's percentile: not significantly different"). The regression
// gate still reads the verdict's percentile only.
func Headline(c *Comparison) string {
	if c.NotJudged != "" {
		return fmt.Sprintf("B is not judged: a side's measurement was disturbed (%s shown, not significant)", c.Percentile)
	}
	var slower []string
	var worst *LatencyDelta
	for i := range c.Latency {
		d := &c.Latency[i]
		if !d.Significant || d.Change <= 0 {
			continue
		}
		slower = append(slower, d.Stat)
		if worst == nil || d.Change > worst.Change {
			worst = d
		}
	}
	if worst == nil || worst.Stat == c.Percentile {
		return fmt.Sprintf("B is %s (%s)", verdictPhrase(c.Verdict), c.Percentile)
	}
	s := fmt.Sprintf("B is slower at %s (worst %s %+.1f%%)", strings.Join(slower, ", "), worst.Stat, 100*worst.Change)
	if !slices.Contains(slower, c.Percentile) {
		s += fmt.Sprintf("; %s, the verdict's percentile: %s", c.Percentile, verdictPhrase(c.Verdict))
	}
	return s
}

func verdictPhrase(v string) string {
	switch v {
	case VerdictFaster:
		return "faster"
	case VerdictSlower:
		return "slower"
	}
	return "not significantly different"
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
