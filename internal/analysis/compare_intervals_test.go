package analysis

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// TestCompareOrderStatisticIntervals: each percentile row carries both
// runs' order-statistic intervals, marked insufficient where the runs
// cannot bound it, and a gate on such a percentile is undecided, not passed.
func TestCompareOrderStatisticIntervals(t *testing.T) {
	xs := realSamples(t)
	a := runWith(resample(xs, 100, 21, 1))
	b := runWith(resample(xs, 100, 22, 1.02))
	c, err := Compare(a, b, "a.json", "b.json", CompareConfig{Percentile: "p99", Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	p50, p99, mean := c.Latency[statIndex("p50")], c.Latency[statIndex("p99")], c.Latency[statIndex("mean")]
	want := stats.QuantileInterval(sortedCopyOf(a.Latency.Samples), 0.5, c.Confidence)
	if p50.AInterval == nil || !p50.AInterval.Sufficient || *p50.AInterval.Lower != *want.Lower || *p50.AInterval.Upper != *want.Upper {
		t.Errorf("p50 A interval %+v, want %+v", p50.AInterval, want)
	}
	if p99.BInterval == nil || p99.BInterval.Sufficient || p99.BInterval.MinSamples != 368 {
		t.Errorf("p99 B interval from 100 runs: %+v", p99.BInterval)
	}
	if mean.AInterval != nil {
		t.Errorf("the mean got an order-statistic interval")
	}
	if r := c.Regression; r == nil || r.Exceeded || !r.Undecided || !strings.HasPrefix(r.Reason, "undecided: insufficient runs for p99 (368 needed") {
		t.Errorf("gate on p99 from 100 runs: %+v", c.Regression)
	}
	var text bytes.Buffer
	if err := WriteComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "p99, order-statistic 95% intervals: A ") || !strings.Contains(text.String(), "(insufficient runs)") ||
		!strings.Contains(text.String(), "Gate:    undecided") {
		t.Errorf("text:\n%s", text.String())
	}
	// A clear slowdown on p50: the intervals do not overlap.
	b = runWith(resample(xs, 100, 22, 1.5))
	c, _ = Compare(a, b, "a.json", "b.json", CompareConfig{})
	text.Reset()
	WriteComparisonText(&text, c)
	if !strings.Contains(text.String(), "(do not overlap)") {
		t.Errorf("50%% slower, yet:\n%s", text.String())
	}
}

func sortedCopyOf(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

func withSLA(r *report.Report, threshold float64, n, v int) *report.Report {
	verdict, needed := stats.SLAVerdict(n, v, 99, stats.SLAConfidence)
	r.Load = &report.Load{SLA: &report.SLAResult{ThresholdS: threshold, Percentile: 99, Requests: n, Violations: v,
		Verdict: string(verdict), Confidence: stats.SLAConfidence, RequestsNeeded: needed}}
	return r
}

// TestCompareSLAVerdicts: a met-to-missed change of two decided
// early-stopping verdicts fails the gate; an undecided verdict never does.
func TestCompareSLAVerdicts(t *testing.T) {
	xs := realSamples(t)
	same := resample(xs, 300, 31, 1)
	for _, tc := range []struct {
		name                string
		a, b                *report.Report
		regressed, exceeded bool
		text                string
	}{
		{"met then missed", withSLA(runWith(same), 0.2, 700, 0), withSLA(runWith(same), 0.2, 700, 40), true, true,
			"SLA p99 ≤ 200.00ms (early stopping at 99%): A met (700 requests, 0 over); B missed (700 requests, 40 over)"},
		{"met then undecided", withSLA(runWith(same), 0.2, 700, 0), withSLA(runWith(same), 0.2, 100, 0), false, false,
			"B insufficient requests (100 requests, 0 over); 459 requests would decide it"},
		{"different SLAs", withSLA(runWith(same), 0.2, 700, 0), withSLA(runWith(same), 0.1, 700, 40), false, false,
			"(different SLAs, not compared)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compare(tc.a, tc.b, "a.json", "b.json", CompareConfig{Threshold: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			if c.SLA == nil || c.SLA.Regressed != tc.regressed || c.Regression.Exceeded != tc.exceeded {
				t.Errorf("sla %+v, gate %+v", c.SLA, c.Regression)
			}
			var text bytes.Buffer
			WriteComparisonText(&text, c)
			if !strings.Contains(text.String(), tc.text) {
				t.Errorf("text lacks %q:\n%s", tc.text, text.String())
			}
		})
	}
	if c, _ := Compare(runWith(same), withSLA(runWith(same), 0.2, 700, 0), "a", "b", CompareConfig{}); c.SLA != nil {
		t.Errorf("one run without an SLA, yet %+v", c.SLA)
	}
}

func TestCompareWarnsOnATuneWinner(t *testing.T) {
	xs := realSamples(t)
	a, b := runWith(resample(xs, 100, 41, 1)), runWith(resample(xs, 100, 42, 1))
	a.Tune = &report.Tune{Best: 0, Rows: make([]report.TuneRow, 16)}
	c, err := Compare(a, b, "a.json", "b.json", CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings, "\n"); !strings.Contains(w, "run A is the best of a --tune sweep of 16 configurations") || strings.Contains(w, "run B") {
		t.Errorf("warnings %q", w)
	}
}
