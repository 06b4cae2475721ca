package analysis

import (
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

func tuneRow(label, opt string, lo, est, hi float64) report.TuneRow {
	return report.TuneRow{Label: label, OptLevel: opt, IntraOpThreads: 1, ExecutionMode: "sequential",
		P50: stats.Interval{Percentile: 50, Estimate: est, Lower: &lo, Upper: &hi, Confidence: 0.95, Sufficient: true}}
}

func layoutFinding() []report.Finding {
	return []report.Finding{
		{Rule: "layout", Recommendation: "Also compare with ORT_ENABLE_EXTENDED (ortel bench --opt-level extended, then ortel compare)."},
		{Rule: "jitter", Recommendation: "Pin the process."},
	}
}

// TestLinkTune: a finding recommending an optimization level names the
// sweep row that tested it, with both intervals and what they say; without
// a sweep it suggests one; other findings are left alone.
func TestLinkTune(t *testing.T) {
	for _, tc := range []struct {
		name string
		tune *report.Tune
		want []string
		row  float64 // tune_row evidence (1-based), -1: none
	}{
		{"no sweep", nil, []string{"ortel bench --tune measure every optimization level"}, -1},
		{"best is the default level", &report.Tune{Best: 0, RunnerUp: 1, Rows: []report.TuneRow{
			tuneRow("opt all, 1 thread, sequential", "all", 0.009, 0.010, 0.011),
			tuneRow("opt extended, 1 thread, sequential", "extended", 0.012, 0.013, 0.014),
		}}, []string{"Tested by --tune (row 2, opt extended, 1 thread, sequential): extended p50 13.00ms [12.00ms, 14.00ms]" +
			" vs all p50 10.00ms [9.00ms, 11.00ms] (row 1): extended is slower (the intervals do not overlap)."}, 2},
		{"best is the recommended level", &report.Tune{Best: 0, RunnerUp: 1, Rows: []report.TuneRow{
			tuneRow("opt extended, 2 threads, sequential", "extended", 0.009, 0.010, 0.0125),
			tuneRow("opt extended, 1 thread, sequential", "extended", 0.0095, 0.0105, 0.013),
			tuneRow("opt all, 2 threads, sequential", "all", 0.012, 0.013, 0.014),
		}}, []string{"(row 1, opt extended, 2 threads, sequential): extended p50", "vs all p50", "(row 3): the intervals overlap"}, 1},
		{"level not swept", &report.Tune{Best: 0, Rows: []report.TuneRow{tuneRow("opt all, 1 thread, sequential", "all", 0.009, 0.010, 0.011)}},
			[]string{"did not try level extended; add it with --tune-opt-levels extended,all"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := linkTune(&report.Report{Tune: tc.tune}, layoutFinding())
			for _, w := range tc.want {
				if !strings.Contains(fs[0].Recommendation, w) {
					t.Errorf("recommendation lacks %q:\n%s", w, fs[0].Recommendation)
				}
			}
			if fs[1].Recommendation != "Pin the process." {
				t.Errorf("a finding without --opt-level changed: %q", fs[1].Recommendation)
			}
			row := -1.0
			for _, e := range fs[0].Evidence {
				if e.Name == "tune_row" {
					row = e.Value
				}
			}
			if row != tc.row {
				t.Errorf("tune_row evidence %v, want %v", row, tc.row)
			}
		})
	}
}
