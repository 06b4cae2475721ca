package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/liveview"
)

// TestLiveViewInChromium runs `ortel bench --ui` on a real model and drives
// the live page in headless Chromium: no script or console error, at least
// 10 updates per second counted by the page over 5 s, the latency chart's
// pixels change between two screenshots, and the REST payloads decode
// strictly into the documented schema, and the last profiled run's timeline
// is served and drawn. ORTEL_UPDATE_SCREENSHOT=1 saves the
// second screenshot as docs/liveview.png for the README.
func TestLiveViewInChromium(t *testing.T) {
	browser := findChromium(t)
	model := chainModel(t)
	c := startCDP(t, browser)
	session := c.open()
	defer func() { // reported whatever else failed
		if errs := c.errors(); len(errs) > 0 {
			t.Errorf("the browser reported %d errors: %v", len(errs), errs)
		}
	}()

	urls := make(chan string, 1)
	uiStarted = func(u string) { urls <- u }
	defer func() { uiStarted = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var stderr syncBuffer
	go func() {
		defer close(done)
		run(ctx, &env{stdout: io.Discard, stderr: &stderr}, []string{"bench", "--ui", "0", "--duration", "20s",
			"--sla", "50ms", "--profile-runs", "3", "--out", t.TempDir(), model})
	}()
	defer func() { cancel(); <-done }()
	var url string
	select {
	case url = <-urls:
	case <-done:
		t.Fatalf("bench ended before serving the live view:\n%s", stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("no live view after 2 minutes")
	}

	c.call(session, "Page.navigate", map[string]any{"url": url}, nil)
	c.waitFor(ctx, session, `+document.getElementById("probe").dataset.elapsed >= 5200`, time.Minute)
	var probe struct {
		Rate5   int    `json:"rate5"`
		Elapsed int    `json:"elapsed"`
		Errors  int    `json:"errors"`
		Total   string `json:"total"`
		HW      string `json:"hw"`
	}
	c.eval(session, `(() => { const p = document.getElementById("probe").dataset;
		return {rate5: +p.rate5, elapsed: +p.elapsed, errors: +p.errors,
			total: document.getElementById("total").textContent,
			hw: document.getElementById("hw").textContent}; })()`, &probe)
	if probe.Rate5 < 50 {
		t.Errorf("the page counted %d updates over its last 5 s, want 50 or more (10 per second)", probe.Rate5)
	}
	if probe.Total == "–" || probe.Total == "0" {
		t.Errorf("the page shows %q runs, want the bench's runs", probe.Total)
	}
	if !strings.Contains(probe.HW, "CPU") {
		t.Errorf("the page's hardware table is %q, want a CPU line", probe.HW)
	}

	// Two screenshots: the latency chart's area must differ.
	var rect struct{ X, Y, W, H float64 }
	c.eval(session, `(() => { const r = document.getElementById("latency").getBoundingClientRect();
		return {X: r.x, Y: r.y, W: r.width, H: r.height}; })()`, &rect)
	var sig1 string
	c.eval(session, `document.getElementById("probe").dataset.sig`, &sig1)
	shot1 := c.screenshot(session)
	c.waitFor(ctx, session, `document.getElementById("probe").dataset.sig !== `+jsString(sig1), 30*time.Second)
	c.waitFor(ctx, session, `+document.getElementById("probe").dataset.elapsed >= 6500`, time.Minute)
	shot2 := c.screenshot(session)
	if changed := pixelsChanged(t, shot1, shot2, rect.X, rect.Y, rect.W, rect.H); changed == 0 {
		t.Error("the latency chart looks the same in both screenshots")
	}
	if os.Getenv("ORTEL_UPDATE_SCREENSHOT") == "1" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "liveview.png"), shot2, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// REST payloads decode strictly into the documented schema.
	var cur liveview.Snapshot
	getStrict(t, url+"api/v1/metrics/current", &cur)
	if cur.Version != 1 || cur.Runs.Total == 0 || cur.Runs.P99Seconds == nil || cur.SLA == nil || cur.Phase == nil {
		t.Errorf("current snapshot lacks what a running bench has: %+v", cur)
	}
	var hist struct {
		Version   int                 `json:"version"`
		Snapshots []liveview.Snapshot `json:"snapshots"`
	}
	getStrict(t, url+"api/v1/metrics/history?seconds=2", &hist)
	if hist.Version != 1 || len(hist.Snapshots) < 10 {
		t.Errorf("history of 2 s: version %d, %d snapshots; want 1 and at least 10", hist.Version, len(hist.Snapshots))
	}
	for i := 1; i < len(hist.Snapshots); i++ {
		if hist.Snapshots[i].Seq <= hist.Snapshots[i-1].Seq {
			t.Fatalf("history is not in order at %d", i)
		}
	}

	// When the bench is done, the report is served and the phase says so.
	c.waitFor(ctx, session, `document.getElementById("phase").textContent.startsWith("done") && !document.getElementById("findings-box").hidden`, 2*time.Minute)
	var rep struct {
		Version int             `json:"version"`
		Report  json.RawMessage `json:"report"`
	}
	// The report follows the phase once the telemetry has shut down.
	waitStatus(t, url+"api/v1/report", http.StatusOK, time.Minute)
	getStrict(t, url+"api/v1/report", &rep)
	if rep.Version != 1 || !bytes.Contains(rep.Report, []byte(`"model"`)) {
		t.Errorf("report payload: version %d, %.200s", rep.Version, rep.Report)
	}

	// The last profiled run's timeline is drawn and served.
	c.waitFor(ctx, session, `document.getElementById("probe").dataset.timeline !== undefined`, time.Minute)
	var tl liveview.Timeline
	getStrict(t, url+"api/v1/timeline", &tl)
	var drawn string
	c.eval(session, `document.getElementById("probe").dataset.timeline`, &drawn)
	if want := fmt.Sprintf("%d:%d", tl.Run, len(tl.Nodes)); len(tl.Nodes) == 0 || drawn != want {
		t.Errorf("timeline: served run %d with %d operators, page drew %q (want %q)", tl.Run, len(tl.Nodes), drawn, want)
	}

	if probe.Errors > 0 {
		t.Errorf("the page counted %d script errors", probe.Errors)
	}
}

// waitStatus GETs url until it answers code, up to d.
func waitStatus(t *testing.T, url string, code int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == code {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: no %d after %s", url, code, d)
		}
	}
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

// getStrict GETs url and decodes it into out, refusing unknown fields.
func getStrict(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %s: %s", url, resp.Status, resp.Header.Get("Content-Type"), b)
	}
	dec := json.NewDecoder(resp.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		t.Fatalf("GET %s: not the documented schema: %v", url, err)
	}
}

// pixelsChanged counts the pixels that differ inside the rectangle.
func pixelsChanged(t *testing.T, a, b []byte, x, y, w, h float64) int {
	t.Helper()
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := image.Rect(int(x), int(y), int(x+w), int(y+h)).Intersect(ia.Bounds()).Intersect(ib.Bounds())
	if r.Empty() {
		t.Fatalf("the chart's rectangle %v is outside the screenshot %v", r, ia.Bounds())
	}
	n := 0
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			r1, g1, b1, _ := ia.At(px, py).RGBA()
			r2, g2, b2, _ := ib.At(px, py).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				n++
			}
		}
	}
	return n
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
