package report_test

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

// levelReport is the synthetic report placed against per-level roofs low
// enough that its element-wise nodes are above their L2 roof.
func levelReport(t *testing.T) *report.Report {
	t.Helper()
	r := syntheticReport(t)
	var levels []report.BandwidthRoof
	for _, l := range []struct {
		name      string
		cache, ws int64
		one, all  float64
	}{{"L1", 32 << 10, 16 << 10, 90e9, 100e9}, {"L2", 1 << 20, 512 << 10, 0.5e9, 0.6e9}, {"L3", 32 << 20, 16 << 20, 0.4e9, 0.5e9}, {"DRAM", 0, 128 << 20, 0.2e9, 0.3e9}} {
		levels = append(levels,
			report.BandwidthRoof{Level: l.name, CacheBytes: l.cache, WorkingSetBytes: l.ws, Threads: 1, BytesPerS: l.one},
			report.BandwidthRoof{Level: l.name, CacheBytes: l.cache, WorkingSetBytes: l.ws, Threads: 0, BytesPerS: l.all})
	}
	pk := &report.Peaks{FLOPsPerS: 100e9, BytesPerS: 0.3e9, Ridge: 100e9 / 0.3e9, FLOPsSource: "measured", BytesSource: "measured",
		Levels: levels, Caches: "sysfs /sys/devices/system/cpu/cpu0/cache", Method: "fixture"}
	r.Analysis.Peaks = pk
	r.Analysis.Roofline = analysis.RooflineThreads(r.Operators, pk, 0)
	return r
}

// TestRooflineLevelsRender: the text, Markdown and HTML reports show each
// level's roof with its working set, the roof each op type is compared
// with, and every node above its roof with its reason.
func TestRooflineLevelsRender(t *testing.T) {
	r := levelReport(t)
	var above []report.RooflineOp
	for _, op := range r.Analysis.Roofline.Ops {
		if op.RoofShare != nil && *op.RoofShare > 1 {
			above = append(above, op)
		}
	}
	if len(above) < 3 {
		t.Fatalf("only %d nodes above their roofs: the fixture no longer tests the explanations", len(above))
	}
	var text, md, html bytes.Buffer
	if err := report.WriteAnalysisText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"bandwidth roofs per level (sysfs /sys/devices/system/cpu/cpu0/cache)",
		"L1     32.0 KiB      16.0 KiB   90.00 GB/s", "L2      1.0 MiB     512.0 KiB", "DRAM          -     128.0 MiB", "1 thread  default threads",
		"vs roof", "nodes above their roofs, by reason",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"| level | cache | working sets | 1 thread | default threads |", "| L2 | 1.0 MiB | 512.0 KiB | 500.00 MB/s | 600.00 MB/s |", "| vs roof |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	// The nodes above their roofs are grouped by reason: each reason once,
	// with its count and its highest node's own sentence; no node's
	// sentence printed twice.
	reasons := map[string]int{}
	highest := map[string]report.RooflineOp{}
	for _, op := range above {
		if op.AboveReason == "" {
			t.Fatalf("%s is above its roof without a reason kind", op.Name)
		}
		if _, ok := highest[op.AboveReason]; !ok || *op.RoofShare > *highest[op.AboveReason].RoofShare {
			highest[op.AboveReason] = op
		}
		reasons[op.AboveReason]++
	}
	mdText := strings.NewReplacer("_", `\_`, "*", `\*`, "<", "&lt;", ">", "&gt;").Replace
	for name, out := range map[string]string{"text": text.String(), "Markdown": md.String()} {
		esc := func(s string) string { return s }
		if name == "Markdown" {
			esc = mdText
		}
		for reason, n := range reasons {
			head := esc(fmt.Sprintf("%d %s (", n, reason))
			if c := strings.Count(out, head); c != 1 {
				t.Errorf("%s says %q %d times, want once", name, head, c)
			}
			if op := highest[reason]; !strings.Contains(out, esc(op.Name+" ("+op.OpType)) || !strings.Contains(out, esc(op.AboveRoof)) {
				t.Errorf("%s does not name %s, the highest node of %q, with its reason", name, op.Name, reason)
			}
		}
		for _, op := range above {
			if c := strings.Count(out, esc(op.AboveRoof)); c > 1 {
				t.Errorf("%s repeats %s's reason %d times", name, op.Name, c)
			}
		}
	}
	page := html.String()
	if n := strings.Count(section(page, `id="roofs"`), "<tr>"); n != 1+len(r.Analysis.Peaks.Levels) {
		t.Errorf("HTML roof table has %d rows, want a header and %d roofs", n, len(r.Analysis.Peaks.Levels))
	}
	if n := strings.Count(section(page, `id="above-roof"`), "<tr>"); n != 1+len(above) {
		t.Errorf("HTML above-roof table has %d rows, want a header and %d nodes", n, len(above))
	}
	for _, op := range above {
		if !strings.Contains(section(page, `id="above-roof"`), template.HTMLEscapeString(op.AboveRoof)) {
			t.Errorf("the HTML above-roof table does not say why %s is above its roof", op.Name)
		}
	}
}

// section returns the table of page that starts with the tag holding attr.
func section(page, attr string) string {
	i := strings.Index(page, attr)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</table>")
	if j < 0 {
		return page[i:]
	}
	return page[i : i+j]
}

var levelRoofRe = regexp.MustCompile(`<polyline[^>]*class="level-roof"`)

// TestRooflineChartDrawsLevels: in headless Chromium, the roofline chart
// draws one dashed roof per cache level on the model's thread count.
func TestRooflineChartDrawsLevels(t *testing.T) {
	browser := chromium(t)
	r := levelReport(t)
	page := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := report.WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, log := dumpDOM(t, browser, page)
	checkRendered(t, dom, log, []string{"roofline"})
	if n := len(levelRoofRe.FindAllString(dom, -1)); n != 3 {
		t.Errorf("%d level roofs drawn, want 3 (L1, L2, L3 on the default threads; DRAM is the solid roof)", n)
	}
}
