package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/stats"
)

// TestWriteTextMarksInsufficientPercentiles: from 100 runs, p99 and p99.9
// cannot be bounded at 95%; the text report must not print them as
// measured, and must show the intervals of the others.
func TestWriteTextMarksInsufficientPercentiles(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = 0.100 + float64(i)*0.0001
	}
	r := &Report{Latency: Latency{Summary: stats.Summarize(xs), Samples: xs}}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"95% confidence intervals (distribution-free, order statistics)",
		"p50    104.95ms  [",
		"p99    insufficient runs: at least ",
		"p99.9  insufficient runs: at least ",
		"needs 3688 runs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	// The percentile row prints a dash, not the interpolated p99 and p99.9.
	row := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "104.95ms") && !strings.Contains(line, "[") {
			row = line
		}
	}
	if strings.Count(row, "—") != 2 {
		t.Errorf("percentile row %q: want p99 and p99.9 shown as —", row)
	}
}

// TestAutoRunsText: what --runs auto did, and under its time cap what
// the cap allowed.
func TestAutoRunsText(t *testing.T) {
	w := 0.081
	tests := []struct {
		name string
		a    AutoRuns
		want string
	}{
		{"width", AutoRuns{Percentile: 99, TargetWidth: 0.05, LimitS: 30, Runs: 1200, Width: &w, StoppedBy: "width"}, "--runs auto: p99's interval 8.1% of it wide after 1200 runs (target 5%)"},
		{"cap, bounded", AutoRuns{Percentile: 99, TargetWidth: 0.05, LimitS: 30, Runs: 640, Width: &w, StoppedBy: "time limit"},
			"--runs auto: its 30.00s cap allowed 640 runs, p99's interval 8.1% of it wide (target 5%; a longer --duration narrows it)"},
		{"cap, unbounded", AutoRuns{Percentile: 99, TargetWidth: 0.05, LimitS: 30, Runs: 40, StoppedBy: "time limit"},
			"--runs auto: its 30.00s cap allowed 40 runs, p99 not bounded on both sides (target 5%; a longer --duration narrows it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AutoRunsText(&tt.a); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestWriteTextConfigLines(t *testing.T) {
	w := 0.042
	r := &Report{Config: Config{
		AutoRuns: &AutoRuns{Percentile: 99, TargetWidth: 0.05, LimitS: 60, Runs: 1200, Width: &w, StoppedBy: "width"},
		Session: &SessionOptions{OptLevel: "extended", ExecutionMode: "sequential", SaveOptimized: "det.opt.onnx",
			Config: map[string]string{"session.intra_op.allow_spinning": "0"}, Providers: []string{"CPUExecutionProvider"}},
	}}
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"runs      --runs auto: p99's interval 4.2% of it wide after 1200 runs (target 5%)",
		"session   optimization level extended, sequential execution, providers CPUExecutionProvider, session.intra_op.allow_spinning=0, optimized model saved to det.opt.onnx",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
