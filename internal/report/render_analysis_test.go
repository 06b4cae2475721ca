package report_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updating() {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

func TestWriteMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteMarkdown(&b, syntheticReport(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "synthetic.md", b.Bytes())
}

func TestWriteMarkdownSections(t *testing.T) {
	tests := []struct {
		name string
		rep  *report.Report
		want []string
	}{
		{"real det run", realReport(t), []string{"# ortel report — ch\\_PP-OCRv4\\_det\\_infer", "## Roofline", "| Conv | CPU |", "## Findings", "memory-bound-hot-ops", "## Energy", "**Unavailable:**"}},
		{"synthetic", syntheticReport(t), []string{"### Batch sweep", "| 4 **best** |", "Warm-up (auto)", "| package-0 | cpu |", "synthetic\\_&lt;model&gt;", `Test CPU \| 9000`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report.WriteMarkdown(&b, tt.rep); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("markdown lacks %q", w)
				}
			}
			checkMarkdownTables(t, b.String())
		})
	}
}

// checkMarkdownTables fails t when a Markdown table row has a different
// number of cells from its header (escaped \| not counted).
func checkMarkdownTables(t *testing.T, md string) {
	t.Helper()
	cols := 0
	for _, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "|") {
			cols = 0
			continue
		}
		n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|")
		if cols == 0 {
			cols = n
		} else if n != cols {
			t.Errorf("row has %d separators, header %d: %s", n, cols, l)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	r := syntheticReport(t)
	rows := map[string]int{
		report.CSVSamples:  len(r.Latency.Samples),
		report.CSVNodes:    len(r.Operators.Timeline),
		report.CSVOpTypes:  len(r.Operators.ByType),
		report.CSVFindings: len(r.Analysis.Findings),
	}
	for _, table := range report.CSVTables() {
		t.Run(table, func(t *testing.T) {
			var b bytes.Buffer
			if err := report.WriteCSV(&b, r, table); err != nil {
				t.Fatal(err)
			}
			recs, err := csv.NewReader(&b).ReadAll() // also checks every row has the header's width
			if err != nil {
				t.Fatal(err)
			}
			if want, ok := rows[table]; ok && len(recs)-1 != want {
				t.Errorf("%d data rows, want %d", len(recs)-1, want)
			}
			if len(recs) < 2 {
				t.Errorf("table %s has no data rows", table)
			}
		})
	}
	var b bytes.Buffer
	report.WriteCSV(&b, r, report.CSVSummary)
	for _, want := range []string{"latency,p99,", "peaks,flops_per_s,1e+11,{flop}/s", "energy,available,true", "carbon,grid_intensity,300,g/kW.h"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	report.WriteCSV(&b, r, report.CSVNodes)
	if !strings.Contains(b.String(), "conv_0,Conv,CPUExecutionProvider,0,0.002,") || !strings.Contains(b.String(), ",unknown,,,,") {
		t.Errorf("nodes table:\n%s", b.String())
	}
	if err := report.WriteCSV(&b, r, "everything"); err == nil || !strings.Contains(err.Error(), "summary") {
		t.Errorf("unknown table: %v", err)
	}
	// A report without analysis or operators still writes valid tables.
	bare := &report.Report{Latency: r.Latency}
	for _, table := range report.CSVTables() {
		b.Reset()
		if err := report.WriteCSV(&b, bare, table); err != nil {
			t.Errorf("%s of a bare report: %v", table, err)
		}
	}
}

func TestWriteAnalysisText(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteAnalysisText(&b, realReport(t)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Machine peaks", "ridge", "Roofline (one profiled run: 400 nodes", "Conv", "Findings (", "1. [", "evidence:", "Energy", "unavailable"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	report.WriteAnalysisText(&b, syntheticReport(t))
	for _, want := range []string{"per inference", "above idle", "GFLOP/s per W", "gCO2e per 1000 inferences at 300", "inside another source"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := report.WriteAnalysisText(&b, &report.Report{}); err != nil || b.Len() != 0 {
		t.Errorf("no analysis wrote %q, %v", b.String(), err)
	}
}

func TestWriteHTMLSelfContained(t *testing.T) {
	r := syntheticReport(t)
	r.Model.Name = `</script><script>alert(1)</script>`
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// The SVG namespace is a name, not a fetch; nothing else may point
	// outside the page.
	scan := strings.ReplaceAll(page, `"http://www.w3.org/2000/svg"`, "")
	for _, bad := range []string{"http://", "https://", "<link", "@import", " src=", "//cdn", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(scan, bad) {
			t.Errorf("page refers to something outside itself: %q", bad)
		}
	}
	// The name is escaped everywhere: the page has exactly its own two
	// script elements.
	if n := strings.Count(page, "</script>"); n != 2 {
		t.Errorf("%d </script> in the page, want 2: the model name broke out", n)
	}
	for _, want := range []string{`id="ortel-data"`, `data-chart="latency-hist"`, `data-chart="roofline"`, `data-chart="gantt"`, `data-chart="warmup"`, `data-chart="batch"`, "Energy", `class="finding`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
}
