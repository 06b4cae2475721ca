package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// layoutJS measures the rendered page: its width against the viewport's,
// the order of its sections, and the text labels of each chart whose
// boxes intersect.
const layoutJS = `(() => {
  const d = document.documentElement;
  const overlaps = [];
  document.querySelectorAll("figure svg").forEach(svg => {
    const ts = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim() !== "");
    const bs = ts.map(t => t.getBoundingClientRect());
    for (let i = 0; i < bs.length; i++) for (let j = i + 1; j < bs.length; j++) {
      const a = bs[i], b = bs[j];
      if (a.width > 0 && b.width > 0 && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
        overlaps.push(svg.closest("figure").dataset.chart + ": " + JSON.stringify(ts[i].textContent) + " over " + JSON.stringify(ts[j].textContent));
    }
  });
  return {viewport: d.clientWidth, scroll: d.scrollWidth, sections: [...document.querySelectorAll("main > section")].map(s => s.id), overlaps: overlaps};
})()`

// TestHTMLReportLayout renders a real det report in headless Chromium at
// 1280 and 390 px wide: findings come right after the header, nothing
// scrolls sideways and no two chart labels overlap. Screenshots go to
// $ORTEL_SCREENSHOT_DIR when it is set.
func TestHTMLReportLayout(t *testing.T) {
	browser := findChromium(t)
	var rep report.Report
	if err := json.Unmarshal(testenv.Gunzip(t, "../../internal/analysis/testdata/det_report_epyc.json.gz"), &rep); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteHTML(&b, &rep); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startCDP(t, browser)
	for _, width := range []int{1280, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			s := c.open()
			c.call(s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}, nil)
			c.call(s, "Page.navigate", map[string]any{"url": "file://" + page}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			c.waitFor(ctx, s, `document.body.dataset.rendered === "ok"`, 60*time.Second)
			var got struct {
				Viewport, Scroll   int
				Sections, Overlaps []string
			}
			c.eval(s, layoutJS, &got)
			if got.Scroll > got.Viewport {
				t.Errorf("the page is %d px wide in a %d px viewport: it scrolls sideways", got.Scroll, got.Viewport)
			}
			if len(got.Sections) == 0 || got.Sections[0] != "findings" {
				t.Errorf("sections %v: want findings first, right after the header", got.Sections)
			}
			for _, o := range got.Overlaps {
				t.Errorf("overlapping labels in %s", o)
			}
			if dir := os.Getenv("ORTEL_SCREENSHOT_DIR"); dir != "" {
				os.WriteFile(filepath.Join(dir, fmt.Sprintf("report-%d.png", width)), c.screenshot(s), 0o644)
			}
		})
	}
}
