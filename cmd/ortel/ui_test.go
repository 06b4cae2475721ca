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
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestLiveViewInChromium runs `ortel bench --ui` on a real model and drives
// the live page in headless Chromium: no script or console error, the page
// counts 50 updates from the stream, each a snapshot the view's history
// holds, the latency chart's pixels change between two screenshots, and the
// REST payloads decode strictly into the documented schema, and the last
// profiled run's timeline is served and drawn. How many updates arrive per
// second is logged, not asserted: it is up to the machine's load (the view
// samples at 12.5 Hz when it can). ORTEL_UPDATE_SCREENSHOT=1 saves the
// second screenshot as docs/liveview.png for the README.
func TestLiveViewInChromium(t *testing.T) {
	browser := findChromium(t)
	model := chainModel(t)
	c := startCDP(t, browser)
	session := c.open()

	urls := make(chan string, 1)
	uiStarted = func(u string) { urls <- u }
	defer func() { uiStarted = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var stderr testenv.SyncBuffer
	go func() {
		defer close(done)
		run(ctx, &env{stdout: io.Discard, stderr: &stderr}, []string{"bench", "--ui", "0", "--duration", "20s",
			"--sla", "50ms", "--profile-runs", "3", "--out", t.TempDir(), model})
	}()
	defer func() { // reported whatever else failed
		// The page's errors are taken before the bench stops: its server
		// going away makes the page's stream fail to reconnect (about 3 s
		// later), which is the test's doing, not the page's.
		errs := c.errors()
		cancel()
		<-done
		if len(errs) > 0 {
			t.Errorf("the browser reported %d errors: %v", len(errs), errs)
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-done:
		t.Fatalf("bench ended before serving the live view:\n%s", stderr.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("no live view after 2 minutes")
	}

	c.call(session, "Page.navigate", map[string]any{"url": url}, nil)
	// A count of updates, not a rate: the minute only ends a wait for a
	// stream that stopped (the bench measures for 20 s, 250 samples at
	// the view's rate).
	const minUpdates = 50
	c.waitFor(ctx, session, fmt.Sprintf(`+document.getElementById("updates").textContent >= %d`, minUpdates), time.Minute)
	var probe struct {
		Updates int    `json:"updates"`
		Rate5   int    `json:"rate5"`
		Elapsed int    `json:"elapsed"`
		Errors  int    `json:"errors"`
		Total   string `json:"total"`
		HW      string `json:"hw"`
	}
	c.eval(session, `(() => { const p = document.getElementById("probe").dataset;
		return {updates: +document.getElementById("updates").textContent,
			rate5: +p.rate5, elapsed: +p.elapsed, errors: +p.errors,
			total: document.getElementById("total").textContent,
			hw: document.getElementById("hw").textContent}; })()`, &probe)
	t.Logf("the page counted %d updates in %d ms, %d over its last 5 s (figure, not asserted: the machine's load decides it)", probe.Updates, probe.Elapsed, probe.Rate5)
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
	var all struct {
		Version   int                 `json:"version"`
		Snapshots []liveview.Snapshot `json:"snapshots"`
	}
	getStrict(t, url+"api/v1/metrics/history?seconds=600", &all)
	checkHistory(t, hist.Version, hist.Snapshots, all.Snapshots, 2*time.Second, probe.Updates)

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

// checkHistory checks a history of the last d (recent) against the whole
// history fetched after it (all), without assuming a sampling rate: recent
// is in order, is the run of all that ends with recent's newest snapshot
// and reaches back d and no further, and all holds at least the updates
// the page counted (each was a sampled snapshot).
func checkHistory(t *testing.T, version int, recent, all []liveview.Snapshot, d time.Duration, updates int) {
	t.Helper()
	if version != 1 || len(recent) == 0 || len(all) < updates {
		t.Fatalf("history: version %d, %d snapshots of the last %s, %d in all; want 1, some, and at least the %d the page counted", version, len(recent), d, len(all), updates)
	}
	for i := 1; i < len(recent); i++ {
		if recent[i].Seq <= recent[i-1].Seq {
			t.Fatalf("history is not in order at %d", i)
		}
	}
	newest := recent[len(recent)-1]
	at := -1
	for i, s := range all {
		if s.Seq == recent[0].Seq {
			at = i
		}
	}
	if at < 0 || at+len(recent) > len(all) {
		t.Fatalf("the history of %s (seq %d..%d) is not in the whole history", d, recent[0].Seq, newest.Seq)
	}
	for i, s := range recent {
		if all[at+i].Seq != s.Seq {
			t.Fatalf("the history of %s skips seq %d", d, all[at+i].Seq)
		}
		if s.Time.Before(newest.Time.Add(-d)) {
			t.Errorf("snapshot %d at %v is older than %s before the newest (%v)", s.Seq, s.Time, d, newest.Time)
		}
	}
	if at > 0 && !all[at-1].Time.Before(newest.Time.Add(-d)) {
		t.Errorf("snapshot %d at %v is within %s of the newest (%v) but not in its history", all[at-1].Seq, all[at-1].Time, d, newest.Time)
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

// TestWeakUITokensAreRefused: a --ui-token (or ORTEL_UI_TOKEN) that is
// easy to guess — sixteen spaces, one character repeated, a run — is a
// usage error naming the flag and saying how to make a good one, before
// any work starts; a random token is taken.
func TestWeakUITokensAreRefused(t *testing.T) {
	t.Setenv("ORTEL_HOST_ROOT", hostRoot(t, false))
	for _, tc := range []struct {
		name, token, env, want string
	}{
		{"spaces", strings.Repeat(" ", 16), "", "spaces"},
		{"repeated", strings.Repeat("a", 16), "", "different characters"},
		{"run", "abcdefghijklmnop", "", "consecutive"},
		{"weak environment", "", strings.Repeat("a", 20), "ORTEL_UI_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ORTEL_UI_TOKEN", tc.env)
			args := []string{"agent", "--ui", "127.0.0.1:0", "--duration", "1ms", "--out", t.TempDir()}
			if tc.token != "" {
				args = append(args, "--ui-token", tc.token)
			}
			code, _, stderr := ortel(t, args...)
			if code != exitUsage || !strings.Contains(stderr, "--ui-token") || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "openssl rand") {
				t.Errorf("exit %d, want %d with a message naming --ui-token and saying %q:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
	t.Setenv("ORTEL_UI_TOKEN", "")
	code, _, stderr := ortel(t, "agent", "--ui", "127.0.0.1:0", "--ui-token", "9f3c1a7e5b2d8046c1e7", "--duration", "1ms", "--out", t.TempDir())
	if code != exitOK && code != exitTelemetryLost {
		t.Errorf("a random token: exit %d\n%s", code, stderr)
	}
}
