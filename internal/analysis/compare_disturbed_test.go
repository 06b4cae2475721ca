package analysis

import (
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestCompareRefusesDisturbed: B 30% slower is significant and a gate
// regression when both sides were stable; with either side disturbed no
// change is significant, the gate is undecided and the warning names the
// side; --allow-disturbed judges it anyway.
func TestCompareRefusesDisturbed(t *testing.T) {
	xs := realSamples(t)
	stable := &report.Measurement{State: report.MeasurementStable}
	disturbed := &report.Measurement{State: report.MeasurementDisturbed, AffectedShare: 0.4,
		Reasons: []report.MeasurementReason{{Kind: "co-runner", Share: 0.4}}}
	tests := []struct {
		name         string
		ma, mb       *report.Measurement
		allow        bool
		wantJudged   bool
		wantSideName string
	}{
		{"both stable", stable, stable, false, true, ""},
		{"no verdicts (older reports)", nil, nil, false, true, ""},
		{"A disturbed", disturbed, stable, false, false, "A (a.json) was disturbed: co-runner (40% of the phase)"},
		{"B disturbed", stable, disturbed, false, false, "B (b.json) was disturbed"},
		{"B disturbed, allowed", stable, disturbed, true, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := runWith(resample(xs, 600, 1, 1)), runWith(resample(xs, 600, 2, 1.3))
			a.Measurement, b.Measurement = tt.ma, tt.mb
			c, err := Compare(a, b, "a.json", "b.json", CompareConfig{Threshold: 0.05, AllowDisturbed: tt.allow})
			if err != nil {
				t.Fatal(err)
			}
			judged := c.Verdict == VerdictSlower && c.Regression.Exceeded
			if judged != tt.wantJudged {
				t.Fatalf("verdict %q, gate %+v; want judged %v", c.Verdict, c.Regression, tt.wantJudged)
			}
			if tt.wantJudged {
				if c.NotJudged != "" {
					t.Errorf("not_judged %q on a judged comparison", c.NotJudged)
				}
				return
			}
			for _, d := range c.Latency {
				if d.Significant {
					t.Errorf("%s significant with a disturbed side", d.Stat)
				}
			}
			if !c.Regression.Undecided || !strings.Contains(c.NotJudged, tt.wantSideName) || !strings.Contains(c.Warnings[0], "--allow-disturbed") {
				t.Errorf("gate %+v, not_judged %q, warnings %q", c.Regression, c.NotJudged, c.Warnings)
			}
			if h := Headline(c); !strings.Contains(h, "not judged") {
				t.Errorf("headline %q", h)
			}
		})
	}
}
