package main

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// compareRuns writes three reports drawn (with a fixed seed) from 400 real
// ONNX Runtime latencies: a, b (the same build) and slow (b, 10% slower).
func compareRuns(t *testing.T) (a, b, slow string) {
	t.Helper()
	raw, err := os.ReadFile("../../internal/analysis/testdata/chain_latency.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Samples []float64 `json:"samples_s"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	draw := func(seed uint64, scale float64) []float64 {
		r := rand.New(rand.NewPCG(seed, 3))
		out := make([]float64, 300)
		for i := range out {
			out[i] = f.Samples[r.IntN(len(f.Samples))] * scale
		}
		return out
	}
	dir := t.TempDir()
	write := func(name string, xs []float64) string {
		s := stats.Summarize(xs)
		r := &report.Report{SchemaVersion: report.SchemaVersion, Model: report.Model{Name: "chain"},
			Latency:    report.Latency{Summary: s, Samples: xs},
			Throughput: report.Throughput{RunsPerS: float64(len(xs)) / s.Sum, ItemsPerS: float64(len(xs)) / s.Sum}}
		p := filepath.Join(dir, name)
		if err := r.Write(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("a.json", draw(1, 1)), write("b.json", draw(2, 1)), write("slow.json", draw(2, 1.10))
}

func TestCompareGate(t *testing.T) {
	a, b, slow := compareRuns(t)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"same build", []string{"compare", a, b}, 0, []string{"not significantly different", "p99.9"}},
		{"same build gated", []string{"compare", "--fail-on-regression", "5%", a, b}, 0, []string{"Gate:    no regression"}},
		{"same file", []string{"compare", a, a}, 0, []string{"+0.0%", "not significantly different"}},
		{"planted regression, no gate", []string{"compare", a, slow}, 0, []string{"B is slower (p50)"}},
		{"planted regression gated", []string{"compare", a, slow, "--fail-on-regression", "5%"}, exitRegression, []string{"B is slower", "regression: B (", "exceeds the 5.0% threshold"}},
		{"gate above the regression", []string{"compare", "--fail-on-regression", "0.2", a, slow}, 0, []string{"within the 20.0% threshold"}},
		{"speed-up passes", []string{"compare", "--fail-on-regression", "5%", slow, b}, 0, []string{"B is faster"}},
		{"markdown", []string{"compare", "--format", "md", a, slow}, 0, []string{"## ortel compare: B is slower", "| p50 |"}},
		// 300 samples cannot bound p99 at 95% (368 needed): the gate never
		// fires on it: the gate is undecided, and the output says so.
		{"p99 gate on few samples", []string{"compare", "--percentile", "p99", "--fail-on-regression", "5%", a, slow}, 0, []string{"Gate:    undecided: insufficient runs for p99", "insufficient runs: 300 samples cannot bound p99 at 95% confidence (it needs 368 per run)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ortel(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, stdout, stderr)
			}
			for _, c := range tt.contains {
				if !strings.Contains(stdout+stderr, c) {
					t.Errorf("output lacks %q:\n%s%s", c, stdout, stderr)
				}
			}
		})
	}
}

func TestCompareJSON(t *testing.T) {
	a, _, slow := compareRuns(t)
	code, stdout, stderr := ortel(t, "compare", "--format", "json", "--fail-on-regression", "5%", a, slow)
	if code != exitRegression {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var c analysis.Comparison
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatal(err)
	}
	if c.Verdict != analysis.VerdictSlower || c.Regression == nil || !c.Regression.Exceeded || len(c.Latency) != 6 {
		t.Errorf("comparison: %+v", c)
	}
	for _, d := range c.Latency {
		if d.Stat == "p50" && (d.Change < 0.05 || d.CILow > 0.10 || d.CIHigh < 0.10) {
			t.Errorf("p50 change %+.3f, CI %+.3f..%+.3f around the planted +0.10", d.Change, d.CILow, d.CIHigh)
		}
	}
}

func TestCompareBadInput(t *testing.T) {
	a, _, _ := compareRuns(t)
	dir := t.TempDir()
	few := filepath.Join(dir, "few.json")
	(&report.Report{SchemaVersion: report.SchemaVersion, Latency: report.Latency{Samples: []float64{0.1, 0.2}}}).Write(few)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"one run", []string{"compare", a}, 2, []string{"want two reports"}},
		{"bad percentile", []string{"compare", "--percentile", "p42", a, a}, 2, []string{"p42"}},
		{"bad gate", []string{"compare", "--fail-on-regression", "lots", a, a}, 2, []string{"--fail-on-regression", `"lots"`}},
		{"bad format", []string{"compare", "--format", "html", a, a}, 2, []string{`--format "html"`}},
		{"bad resamples", []string{"compare", "--resamples", "5", a, a}, 2, []string{"--resamples"}},
		{"missing", []string{"compare", a, filepath.Join(dir, "nope.json")}, 1, []string{"nope.json"}},
		{"few samples", []string{"compare", a, few}, 1, []string{"few.json", "2 latency samples"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ortel(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tt.code, stdout, stderr)
			}
			for _, c := range tt.contains {
				if !strings.Contains(stdout+stderr, c) {
					t.Errorf("output lacks %q:\n%s", c, stdout+stderr)
				}
			}
		})
	}
}

// TestBenchThenReportAndCompare runs the real pipeline: bench a generated
// model with ONNX Runtime, render its report as HTML, compare it with
// itself.
func TestBenchThenReportAndCompare(t *testing.T) {
	model := chainModel(t)
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	if code, stdout, stderr := ortel(t, "bench", model, "--runs", "40", "--warmup", "3", "--profile-runs", "1", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
	}
	run := filepath.Join(out, "report.json")
	html := filepath.Join(out, "report.html")
	if code, _, stderr := ortel(t, "report", run, "--file", html, "--peak-flops", "100G", "--peak-bw", "10G"); code != 0 {
		t.Fatalf("report: %s", stderr)
	}
	b, _ := os.ReadFile(html)
	if !strings.Contains(string(b), `data-chart="gantt"`) || !strings.Contains(string(b), "MatMul") {
		t.Error("HTML report of the real run lacks the timeline")
	}
	if code, stdout, stderr := ortel(t, "compare", "--fail-on-regression", "5%", "--allow-disturbed", run, run); code != 0 || !strings.Contains(stdout, "not significantly different") {
		t.Errorf("compare with itself: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
