package analysis

import (
	"fmt"
	"regexp"

	"github.com/ortel-dev/ortel/internal/report"
)

// optLevelFlag finds a recommendation to try a graph optimization level.
var optLevelFlag = regexp.MustCompile(`--opt-level (disable|basic|extended|all)\b`)

// suggestTune is appended to a recommendation a run without a sweep cannot
// back with a measurement.
const suggestTune = " Or let ortel bench --tune measure every optimization level, intra-op thread count and execution mode on this machine, with intervals."

// linkTune ties each finding that recommends an optimization level to the
// sweep row that tested it, when a sweep (bench --tune) ran, and suggests
// the sweep when none did. It changes fs in place and returns it.
func linkTune(rep *report.Report, fs []report.Finding) []report.Finding {
	for i := range fs {
		f := &fs[i]
		m := optLevelFlag.FindStringSubmatch(f.Recommendation)
		if m == nil {
			continue
		}
		t := rep.Tune
		if t == nil || t.Best < 0 || t.Best >= len(t.Rows) {
			f.Recommendation += suggestTune
			continue
		}
		level := m[1]
		ti := fastestAt(t, level, -1)
		if ti < 0 {
			f.Recommendation += fmt.Sprintf(" The --tune sweep did not try level %s; add it with --tune-opt-levels %s,all.", level, level)
			continue
		}
		// Against the best configuration, or, when that is the level
		// recommended, against the fastest at ONNX Runtime's default
		// level (or at any other level when all is the one recommended).
		ri := t.Best
		if t.Rows[ri].OptLevel == level {
			ri = fastestAt(t, "all", ti)
			if level == "all" || ri < 0 {
				ri = fastestAt(t, "", ti)
			}
		}
		tested := t.Rows[ti]
		// The row number as the sweep table prints it (1-based).
		f.Evidence = append(f.Evidence, report.Evidence{Name: "tune_row", Value: float64(ti + 1), Text: tested.Label})
		if ri < 0 {
			f.Recommendation += fmt.Sprintf(" Tested by --tune (row %d, %s): %s p50 %s.", ti+1, tested.Label, level, report.IntervalText(tested.P50))
			continue
		}
		ref := t.Rows[ri]
		f.Recommendation += fmt.Sprintf(" Tested by --tune (row %d, %s): %s p50 %s vs %s p50 %s (row %d): %s.",
			ti+1, tested.Label, level, report.IntervalText(tested.P50), ref.OptLevel, report.IntervalText(ref.P50), ri+1, tuneVerdict(tested, ref, level))
	}
	return fs
}

// fastestAt returns the index of the fastest measured row at level ("":
// any level other than skip's), skipping row skip; -1 when none. Rows are
// fastest first.
func fastestAt(t *report.Tune, level string, skip int) int {
	for i, r := range t.Rows {
		if i == skip || !r.Measured() {
			continue
		}
		if level == "" && skip >= 0 && r.OptLevel == t.Rows[skip].OptLevel {
			continue
		}
		if level == "" || r.OptLevel == level {
			return i
		}
	}
	return -1
}

// tuneVerdict says whether row a is faster than row b by their p50
// intervals.
func tuneVerdict(a, b report.TuneRow, level string) string {
	switch {
	case *a.P50.Upper < *b.P50.Lower:
		return level + " is faster (the intervals do not overlap)"
	case *a.P50.Lower > *b.P50.Upper:
		return level + " is slower (the intervals do not overlap)"
	}
	return "the intervals overlap, so the sweep does not tell them apart"
}
