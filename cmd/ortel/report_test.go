package main

import (
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// realRun writes the real PaddleOCR detection report of package report's
// testdata to a temporary report.json.
func realRun(t *testing.T) string {
	t.Helper()
	return gunzipTo(t, "../../internal/report/testdata/det_report.json.gz", filepath.Join(t.TempDir(), "report.json"))
}

// gunzipTo writes the gzipped testdata file src, decompressed, to dst and
// returns dst.
func gunzipTo(t *testing.T, src, dst string) string {
	t.Helper()
	gz, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, zr); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestReportFormats(t *testing.T) {
	run := realRun(t)
	dir := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		file  string // output file, if any
		check func(t *testing.T, out string)
	}{
		{"text", []string{"report", run}, "", func(t *testing.T, out string) {
			for _, w := range []string{"Steady-state latency", "Machine peaks", "Roofline", "Findings", "Energy", "unavailable:"} {
				if !strings.Contains(out, w) {
					t.Errorf("text lacks %q", w)
				}
			}
		}},
		{"markdown", []string{"report", "--format", "md", run}, "", func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "# ortel report") || !strings.Contains(out, "## Findings") {
				t.Errorf("markdown:\n%.500s", out)
			}
		}},
		{"json", []string{"report", run, "--format", "json"}, "", func(t *testing.T, out string) {
			var r report.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil || r.Analysis == nil || r.SchemaVersion != report.SchemaVersion {
				t.Errorf("json: %v, analysis %v", err, r.Analysis != nil)
			}
		}},
		{"csv nodes", []string{"report", "--format", "csv", "--table", "nodes", run}, "", func(t *testing.T, out string) {
			recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
			if err != nil || len(recs) != 401 || recs[0][0] != "index" {
				t.Errorf("csv: %v, %d rows", err, len(recs))
			}
		}},
		{"html by extension", []string{"report", run, "--file", filepath.Join(dir, "r.html")}, filepath.Join(dir, "r.html"), func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, `data-chart="roofline"`) {
				t.Errorf("html:\n%.300s", out)
			}
		}},
		{"csv by extension", []string{"report", run, "--file", filepath.Join(dir, "s.csv")}, filepath.Join(dir, "s.csv"), func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "section,name,value,unit") {
				t.Errorf("csv summary:\n%.300s", out)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ortel(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			out := stdout
			if tt.file != "" {
				b, err := os.ReadFile(tt.file)
				if err != nil {
					t.Fatal(err)
				}
				out = string(b)
				if !strings.Contains(stderr, "wrote "+tt.file) {
					t.Errorf("stderr: %s", stderr)
				}
			}
			tt.check(t, out)
		})
	}
}

func TestReportReanalyze(t *testing.T) {
	run := realRun(t)
	code, stdout, stderr := ortel(t, "report", run, "--format", "json", "--peak-flops", "1T", "--peak-bw", "100G", "--grid-intensity", "50")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r report.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	p := r.Analysis.Peaks
	if p.FLOPsPerS != 1e12 || p.BytesPerS != 100e9 || p.FLOPsSource != "flag" || r.Analysis.Energy.Carbon.GridIntensity != 50 {
		t.Errorf("peaks %+v, grid %v", p, r.Analysis.Energy.Carbon)
	}
	// With peaks this high every Conv is memory-bound... or compute-bound
	// below them: the classification follows the given ridge of 10.
	for _, ty := range r.Analysis.Roofline.ByOpType {
		if ty.Intensity != nil && (*ty.Intensity >= 10) != (ty.Bound == "compute") {
			t.Errorf("%s: intensity %g, bound %s with ridge 10", ty.OpType, *ty.Intensity, ty.Bound)
		}
	}
}

func TestReportAddsMissingAnalysis(t *testing.T) {
	run := realRun(t)
	r, err := report.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	r.Analysis = nil
	bare := filepath.Join(t.TempDir(), "bare.json")
	if err := r.Write(bare); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := ortel(t, "report", bare, "--format", "md", "--peak-flops", "200G", "--peak-bw", "20G")
	if code != 0 || !strings.Contains(stdout, "## Roofline") || !strings.Contains(stdout, "200.00 GFLOP/s (flag)") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestReportBadInput(t *testing.T) {
	run := realRun(t)
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.json")
	os.WriteFile(corrupt, []byte(`{"schema_version": "ortel.report/v1", "latency": `), 0o644)
	future := filepath.Join(dir, "future.json")
	os.WriteFile(future, []byte(`{"schema_version": "ortel.report/v9"}`), 0o644)
	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"no run", []string{"report"}, 2, []string{"want a RUN.json or one or more PROFILE.json"}},
		{"two runs", []string{"report", run, run}, 2, []string{"give one report, or only profiles"}},
		{"bad format", []string{"report", "--format", "pdf", run}, 2, []string{`--format "pdf"`}},
		{"bad table", []string{"report", "--format", "csv", "--table", "all", run}, 2, []string{`--table "all"`, "op-types"}},
		{"bad peak", []string{"report", "--peak-flops", "fast", run}, 2, []string{"--peak-flops", `"fast"`}},
		{"bad grid", []string{"report", "--grid-intensity", "-3", run}, 2, []string{"--grid-intensity"}},
		{"unknown flag", []string{"report", "--color", run}, 2, []string{"color"}},
		{"missing", []string{"report", filepath.Join(dir, "nope.json")}, 1, []string{"nope.json"}},
		{"corrupt", []string{"report", corrupt}, 1, []string{"corrupt.json", "not a valid report JSON"}},
		{"future schema", []string{"report", future}, 1, []string{"future.json", "ortel.report/v9"}},
		{"unwritable out", []string{"report", run, "--file", filepath.Join(dir, "no", "such", "dir", "r.html")}, 1, []string{"r.html"}},
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
	if code, out, _ := ortel(t, "help", "report"); code != 0 || !strings.Contains(out, "--peak-bw") || !strings.Contains(out, "Examples:") {
		t.Errorf("help report: %d\n%s", code, out)
	}
}
