package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// epycReport is a real `ortel bench paddleocr-det` report from the
// project's 2-core AMD EPYC build machine, analyzed (shared with the
// analysis package's tests).
func epycReport(t *testing.T) *report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal(testenv.Gunzip(t, "../analysis/testdata/det_report_epyc.json.gz"), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// TestSummary: the summary of a real det report fits in 20 lines, bounds
// p50 and p95 and says what p99 needs, and shows the top three findings,
// each with the command that tests it (or the first step of its advice);
// a verdict is shown when the report has one (golden file).
func TestSummary(t *testing.T) {
	r := epycReport(t)
	r.Analysis.Findings[0].Check = "ortel bench paddleocr-det --warmup auto"
	tests := []struct {
		name, verdict, golden string
	}{
		{"det", "", "summary_det.txt"},
		{"det with a verdict", "stable: no interference seen in the measured phase", "summary_det_verdict.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.Verdict = tt.verdict
			var b bytes.Buffer
			if err := report.WriteSummary(&b, r); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if n := strings.Count(out, "\n"); n > 20 {
				t.Errorf("%d lines, want at most 20:\n%s", n, out)
			}
			for _, want := range []string{"p50 ", "p95 ", "p99 ", "bounding it needs", "1. [", "2. [", "3. [", "test: ortel bench paddleocr-det --warmup auto", "… 1 more"} {
				if !strings.Contains(out, want) {
					t.Errorf("summary lacks %q:\n%s", want, out)
				}
			}
			if got := strings.Contains(out, "verdict "); got != (tt.verdict != "") {
				t.Errorf("verdict line shown %v with verdict %q:\n%s", got, tt.verdict, out)
			}
			golden := filepath.Join("testdata", tt.golden)
			if updating() {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if out != string(want) {
				t.Errorf("summary differs from %s (go test -update rewrites it):\n%s", golden, out)
			}
		})
	}
}

// TestEnergyUnavailableSaidOnce: the whole text report says why energy is
// unavailable once, in the hardware section, and the energy section
// points there.
func TestEnergyUnavailableSaidOnce(t *testing.T) {
	r := epycReport(t)
	if r.Hardware == nil || r.Hardware.EnergyUnavailable == "" || r.Analysis.Energy.Available {
		t.Fatal("the fixture has energy: it no longer tests this")
	}
	var b bytes.Buffer
	if err := report.WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteAnalysisText(&b, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), r.Analysis.Energy.Reason); n != 1 {
		t.Errorf("the reason energy is unavailable is printed %d times, want once:\n%s", n, b.String())
	}
	if !strings.Contains(b.String(), "unavailable (the hardware section says why)") {
		t.Error("the energy section does not point at the hardware section")
	}
}
