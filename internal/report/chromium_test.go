package report_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

func chromium(t *testing.T) string { return testenv.Chromium(t) }

// dumpDOM loads the page in headless Chromium and returns the DOM after
// its scripts ran, and what the browser logged.
func dumpDOM(t *testing.T, browser, page string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir="+t.TempDir(), "--window-size=1280,2000", "--enable-logging=stderr", "--v=0",
		"--dump-dom", "file://"+page)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

var (
	figureRe = regexp.MustCompile(`<figure\b[^>]*>`)
	attrRe   = regexp.MustCompile(`([\w-]+)="([^"]*)"`)
	bodyRe   = regexp.MustCompile(`<body\b[^>]*>`)
)

func attrs(tag string) map[string]string {
	m := map[string]string{}
	for _, a := range attrRe.FindAllStringSubmatch(tag, -1) {
		m[a[1]] = a[2]
	}
	return m
}

// checkRendered fails unless every chart drew marks and no script failed.
func checkRendered(t *testing.T, dom, log string, want []string) {
	t.Helper()
	body := attrs(bodyRe.FindString(dom))
	if body["data-rendered"] != "ok" || body["data-js-error"] != "" {
		t.Errorf("page did not render: data-rendered=%q data-js-error=%q\nbrowser log:\n%s", body["data-rendered"], body["data-js-error"], log)
	}
	if strings.Contains(log, "Uncaught") {
		t.Errorf("JavaScript error in the browser log:\n%s", log)
	}
	seen := map[string]bool{}
	for _, tag := range figureRe.FindAllString(dom, -1) {
		a := attrs(tag)
		name := a["data-chart"]
		seen[name] = true
		n, _ := strconv.Atoi(a["data-ok"])
		if n <= 0 || a["data-error"] != "" || a["data-empty"] != "" {
			t.Errorf("chart %s: data-ok=%q data-empty=%q data-error=%q", name, a["data-ok"], a["data-empty"], a["data-error"])
		}
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("chart %s missing from the page", w)
		}
	}
	if strings.Count(dom, "<svg") < len(want) {
		t.Errorf("%d SVG charts for %d figures", strings.Count(dom, "<svg"), len(want))
	}
}

// TestHTMLRendersInChromium renders real and synthetic reports in headless
// Chromium and fails on a JavaScript error or an empty chart.
func TestHTMLRendersInChromium(t *testing.T) {
	browser := chromium(t)
	tests := []struct {
		name string
		rep  *report.Report
		want []string
	}{
		{"real det run", realReport(t), []string{"latency-hist", "latency-cdf", "warmup", "gantt", "optypes", "roofline", "hardware"}},
		{"synthetic, every section", syntheticReport(t), []string{"latency-hist", "latency-cdf", "warmup", "gantt", "optypes", "roofline", "hardware", "batch"}},
	}
	unsupported := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := filepath.Join(t.TempDir(), "report.html")
			var b bytes.Buffer
			if err := report.WriteHTML(&b, tt.rep); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(page, b.Bytes(), 0o644)
			dom, log := dumpDOM(t, browser, page)
			checkRendered(t, dom, log, tt.want)
			if tt.rep.Analysis != nil && !tt.rep.Analysis.Energy.Available && !strings.Contains(dom, `data-energy="unavailable"`) {
				t.Error("energy unavailable is not shown")
			}
			// The charts' p99 marker says when the runs cannot support
			// p99, as the tables do.
			marked := strings.Contains(dom, "p99 (insufficient runs)")
			if !tt.rep.Latency.Summary.Supported(99) {
				unsupported++
				if !marked {
					t.Error("p99 is unsupported by the runs but the charts mark it as measured")
				}
			} else if marked {
				t.Error("p99 is supported by the runs but the charts call it insufficient")
			}
		})
	}
	if unsupported == 0 {
		t.Error("no report here has an unsupported p99: the marker check above cannot fail")
	}
}

// TestHTMLChromiumCheckCatchesBrokenPages makes sure the check above can
// fail: a page whose data does not parse must not pass.
func TestHTMLChromiumCheckCatchesBrokenPages(t *testing.T) {
	browser := chromium(t)
	var b bytes.Buffer
	if err := report.WriteHTML(&b, syntheticReport(t)); err != nil {
		t.Fatal(err)
	}
	broken := regexp.MustCompile(`(?s)(<script id="ortel-data" type="application/json">).*?(</script>)`).ReplaceAllString(b.String(), "${1}{not json${2}")
	page := filepath.Join(t.TempDir(), "broken.html")
	os.WriteFile(page, []byte(broken), 0o644)
	dom, _ := dumpDOM(t, browser, page)
	body := attrs(bodyRe.FindString(dom))
	if body["data-rendered"] == "ok" {
		t.Error("a page with unparsable data rendered ok")
	}
	if body["data-js-error"] == "" {
		t.Error("the JavaScript error was not recorded on <body>")
	}
}
