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
