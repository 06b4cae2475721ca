package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ortel-dev/ortel/internal/units"
)

// AB is an interleaved A/B comparison (bench --ab, and the final duel of
// --tune): two sides measured in one process on sessions of their own, in
// blocks of runs whose order is shuffled within every pair of blocks, and
// the ratio B/A of each statistic with a confidence interval from the
// paired design.
type AB struct {
	A ABSide `json:"a"`
	B ABSide `json:"b"`
	// Verdict is faster, slower, no_difference or undecided: B against A
	// at the headline statistic (p50), judged against Threshold.
	Verdict string `json:"verdict"`
	// Headline is the verdict in one sentence, as printed first.
	Headline string `json:"headline"`
	// Threshold is the relative change that counts (0.02: ±2%).
	Threshold float64 `json:"threshold"`
	// Confidence is the overall confidence over all looks; LookConfidence
	// is each look's (Bonferroni: 1 - (1-Confidence)/Looks).
	Confidence     float64 `json:"confidence"`
	LookConfidence float64 `json:"look_confidence"`
	// Looks is the number of looks the schedule plans (at equal fractions
	// of the time cap); LooksTaken how many happened before the stop.
	Looks      int `json:"looks"`
	LooksTaken int `json:"looks_taken"`
	// StoppedBy is "settled" (every headline interval decided before the
	// cap) or "cap" (the time cap, MaxS, passed).
	StoppedBy string  `json:"stopped_by"`
	MaxS      float64 `json:"max_s"`
	WallS     float64 `json:"wall_s"`
	// BlockRuns is the number of runs in every block (after the first
	// pair, when that pair showed the blocks far longer than planned);
	// Pairs the pairs of
	// blocks (one A, one B) analysed; PairsDisturbed those with a block the
	// interference monitor judged disturbed (flagged, not left out: see
	// Interference).
	BlockRuns      int `json:"block_runs"`
	Pairs          int `json:"pairs"`
	PairsDisturbed int `json:"pairs_disturbed"`
	// Interference says how the blocks were judged, and what a disturbed
	// block does to the result.
	Interference string `json:"interference"`
	// Measurement is the interference monitor's verdict on the whole
	// comparison, absent when no monitor ran.
	Measurement *Measurement `json:"measurement,omitempty"`
	// Method says how the intervals are computed.
	Method string `json:"method"`
	// Stats holds one ratio B/A per statistic.
	Stats []ABStat `json:"stats"`
	// Blocks lists every measured block in the order it ran.
	Blocks []ABBlock `json:"blocks"`
	// LoadAvgStart and LoadAvgEnd are the 1, 5 and 15 minute load averages
	// of the machine when the measurement began and ended (absent where
	// /proc/loadavg is not readable).
	LoadAvgStart []float64 `json:"load_avg_start,omitempty"`
	LoadAvgEnd   []float64 `json:"load_avg_end,omitempty"`
	// Notes says what else the reader should know.
	Notes []string `json:"notes,omitempty"`
}

// ABSide is one side of an A/B comparison.
type ABSide struct {
	// Label is "A" or "B"; Args the bench options that make this side, as
	// given (--ab), and Description a plain summary of its configuration.
	Label       string   `json:"label"`
	Args        []string `json:"args,omitempty"`
	Description string   `json:"description"`
	ModelPath   string   `json:"model_path"`
	// ORTVersion is the ONNX Runtime release the side ran, as the library
	// reports it, and LibraryPath the library file it loaded.
	ORTVersion  string `json:"ort_version,omitempty"`
	LibraryPath string `json:"library_path,omitempty"`
	// Runs is the measured runs in the analysed blocks; WarmupRuns the
	// side's own warm-up; FirstRunS its cold first run.
	Runs       int     `json:"runs"`
	WarmupRuns int     `json:"warmup_runs"`
	FirstRunS  float64 `json:"first_run_s"`
	Errors     int     `json:"errors"`
}

// ABStat is the ratio B/A of one statistic.
type ABStat struct {
	// Name: p50, p90, p99, runs_per_s, cpu_s_per_run.
	Name string `json:"name"`
	// Unit of A and B: "s", "1/s".
	Unit string `json:"unit"`
	// A and B are the statistic over each side's analysed blocks pooled.
	A float64 `json:"a"`
	B float64 `json:"b"`
	// Ratio is B/A; Lower and Upper bound it at the look confidence,
	// absent when the statistic is not bounded (Bounded false).
	Ratio float64  `json:"ratio"`
	Lower *float64 `json:"lower,omitempty"`
	Upper *float64 `json:"upper,omitempty"`
	// Bounded is false for a percentile whose pooled runs on either side
	// are fewer than the order-statistic rule needs (stats.MinSamples at
	// the look confidence), or a statistic a side lacks (CPU time).
	Bounded bool `json:"bounded"`
	// Headline statistics decide when to stop and the verdict.
	Headline bool `json:"headline"`
	// HigherIsBetter: throughput; otherwise lower is better.
	HigherIsBetter bool `json:"higher_is_better"`
	// Verdict for B on this statistic: faster (better beyond the
	// threshold), slower (worse beyond it), no_difference (within it),
	// undecided.
	Verdict string `json:"verdict"`
}

// ABBlock is one block of runs of one side.
type ABBlock struct {
	Pair  int    `json:"pair"`
	Side  string `json:"side"`
	Order int    `json:"order"` // 0: first of its pair, 1: second
	// StartS is when the block began, seconds since the first block.
	StartS float64 `json:"start_s"`
	WallS  float64 `json:"wall_s"`
	Runs   int     `json:"runs"`
	Errors int     `json:"errors"`
	P50S   float64 `json:"p50_s"`
	// CPUS is the process's CPU time (user and system) during the block.
	CPUS float64 `json:"cpu_s"`
	// Disturbed is the interference monitor's verdict on the block, with
	// its reasons (the kinds, with their share of the block).
	Disturbed bool     `json:"disturbed,omitempty"`
	Reasons   []string `json:"reasons,omitempty"`
}

// Stat returns the statistic named name, if present.
func (ab *AB) Stat(name string) (ABStat, bool) {
	for _, s := range ab.Stats {
		if s.Name == name {
			return s, true
		}
	}
	return ABStat{}, false
}

// ABStatText formats a ratio as a change with its interval: "+12.3%
// [+10.1%, +14.2%]", or "+12.3% (not bounded)".
func ABStatText(s ABStat) string {
	if !s.Bounded || s.Lower == nil || s.Upper == nil {
		if s.Ratio == 0 {
			return "-"
		}
		return fmt.Sprintf("%+.1f%% (not bounded)", 100*(s.Ratio-1))
	}
	return fmt.Sprintf("%+.1f%% [%+.1f%%, %+.1f%%]", 100*(s.Ratio-1), 100*(*s.Lower-1), 100*(*s.Upper-1))
}

func abValue(s ABStat, v float64) string {
	switch s.Unit {
	case "s":
		return units.Duration(v)
	case "1/s":
		return fmt.Sprintf("%.1f/s", v)
	}
	return fmt.Sprintf("%.4g", v)
}

func abLoad(l []float64) string {
	if len(l) < 3 {
		return "-"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l[0], l[1], l[2])
}

// WriteABSummary writes the A/B result summary-first: the verdict line,
// the two sides, the ratio table, how it stopped, the load.
func WriteABSummary(w io.Writer, ab *AB) error {
	p := &printer{w: w}
	p.f("%s\n", ab.Headline)
	p.f("  A  %s\n", ab.A.Description)
	p.f("  B  %s\n", ab.B.Description)
	writeABTable(w, p, ab)
	p.f("  %s\n", abProcedure(ab))
	p.f("  load average %s at the start, %s at the end\n", abLoad(ab.LoadAvgStart), abLoad(ab.LoadAvgEnd))
	for _, n := range ab.Notes {
		p.f("  note: %s\n", n)
	}
	return p.err
}

func writeABTable(w io.Writer, p *printer, ab *AB) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  statistic\tA\tB\tB/A − 1 [%g%% interval]\tverdict\t\n", 100*ab.LookConfidence)
	for _, s := range ab.Stats {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t\n", s.Name, abValue(s, s.A), abValue(s, s.B), ABStatText(s), strings.ReplaceAll(s.Verdict, "_", " "))
	}
	tw.Flush()
}

func abProcedure(ab *AB) string {
	stop := fmt.Sprintf("settled at look %d of %d", ab.LooksTaken, ab.Looks)
	if ab.StoppedBy == "cap" {
		stop = fmt.Sprintf("stopped by the %s cap", units.Duration(ab.MaxS))
	}
	s := fmt.Sprintf("%d pairs of %d-run blocks in shuffled order over %s, %s", ab.Pairs, ab.BlockRuns, units.Duration(ab.WallS), stop)
	if ab.PairsDisturbed > 0 {
		s += fmt.Sprintf("; %d of %d pairs had a disturbed block (kept, flagged)", ab.PairsDisturbed, ab.Pairs)
	}
	return s
}

// writeABText renders the A/B section of the whole text report.
func writeABText(w io.Writer, p *printer, ab *AB, title string) {
	if ab == nil {
		return
	}
	p.f("\n")
	p.f("%s (threshold ±%g%%)\n", title, 100*ab.Threshold)
	p.f("  %s\n", ab.Headline)
	p.f("  A  %s\n", ab.A.Description)
	p.f("  B  %s\n", ab.B.Description)
	writeABTable(w, p, ab)
	p.f("  %s\n", abProcedure(ab))
	p.f("  method: %s\n", ab.Method)
	p.f("  load average %s at the start, %s at the end; interference: %s\n", abLoad(ab.LoadAvgStart), abLoad(ab.LoadAvgEnd), ab.Interference)
	for _, n := range ab.Notes {
		p.f("  note: %s\n", n)
	}
}

// writeABMarkdown renders the A/B section in Markdown.
func writeABMarkdown(p *printer, ab *AB, title string) {
	if ab == nil {
		return
	}
	p.f("## %s\n\n**%s**\n\n", title, mdEsc(ab.Headline))
	p.f("- A: %s\n- B: %s\n\n", mdEsc(ab.A.Description), mdEsc(ab.B.Description))
	p.f("| statistic | A | B | B/A − 1 [%g%% interval] | verdict |\n|---|---:|---:|---:|---|\n", 100*ab.LookConfidence)
	for _, s := range ab.Stats {
		p.f("| %s | %s | %s | %s | %s |\n", s.Name, abValue(s, s.A), abValue(s, s.B), ABStatText(s), strings.ReplaceAll(s.Verdict, "_", " "))
	}
	p.f("\n%s. Threshold ±%g%%. Load average %s at the start, %s at the end; interference: %s.\n\n",
		mdEsc(abProcedure(ab)), 100*ab.Threshold, abLoad(ab.LoadAvgStart), abLoad(ab.LoadAvgEnd), ab.Interference)
	p.f("Method: %s\n\n", mdEsc(ab.Method))
}
