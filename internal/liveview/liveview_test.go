package liveview

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func TestRingKeepsTheNewestInOrder(t *testing.T) {
	r := newRing(4)
	t0 := time.Unix(1000, 0)
	for i := 0; i < 10; i++ {
		r.push(sample{at: t0.Add(time.Duration(i) * time.Second)})
	}
	if r.len() != 4 {
		t.Fatalf("len %d, want the bound 4", r.len())
	}
	var got []int64
	r.each(func(s *sample) { got = append(got, s.at.Unix()-1000) })
	if want := []int64{6, 7, 8, 9}; !equal(got, want) {
		t.Fatalf("ring holds %v, want %v", got, want)
	}
	if s, ok := r.at(t0.Add(7500 * time.Millisecond)); !ok || s.at.Unix() != 1007 {
		t.Fatalf("at(7.5s) = %v %v, want the sample of 7s", s, ok)
	}
	if _, ok := r.at(t0.Add(5 * time.Second)); ok {
		t.Fatal("at(5s) found a sample, but the history starts at 6s")
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestQuantileInterpolatesInsideTheBucket(t *testing.T) {
	h := hist{bounds: []float64{1, 2, 4}, counts: []uint64{0, 10, 10, 0}}
	for _, c := range []struct{ q, want float64 }{{0.5, 2}, {0.25, 1.5}, {0.75, 3}, {1, 4}} {
		got, ok := quantile(h, c.q)
		if !ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile(%g) = %g, want %g", c.q, got, c.want)
		}
	}
	over := hist{bounds: []float64{1}, counts: []uint64{0, 5}}
	if got, _ := quantile(over, 0.99); got != 1 {
		t.Errorf("overflow bucket quantile = %g, want the last bound 1", got)
	}
	if _, ok := quantile(hist{bounds: []float64{1}, counts: []uint64{0, 0}}, 0.5); ok {
		t.Error("quantile of an empty histogram says ok")
	}
	if c, _ := atOrUnder(h, 3); math.Abs(c-0.75) > 1e-9 {
		t.Errorf("atOrUnder(3) = %g, want 0.75", c)
	}
}

// TestWindowUsesDeltas records slow runs, then fast ones: once the slow
// ones leave the window, p99 reads only the fast ones. A view that read
// the cumulative histogram (no delta) keeps the slow p99 and fails.
func TestWindowUsesDeltas(t *testing.T) {
	t.Run("explicit", func(t *testing.T) { testWindow(t) })
	t.Run("exponential", func(t *testing.T) {
		testWindow(t, sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: runDuration},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}})))
	})
}

func testWindow(t *testing.T, opts ...sdkmetric.Option) {
	reader := NewReader()
	mp := sdkmetric.NewMeterProvider(append(opts, sdkmetric.WithReader(reader))...)
	defer func() { _ = mp.Shutdown(context.Background()) }()
	h, err := mp.Meter("test").Float64Histogram(runDuration, metric.WithExplicitBucketBoundaries(0.001, 0.01, 0.1, 1))
	if err != nil {
		t.Fatal(err)
	}
	v := New(reader, Config{Window: time.Second, SLAThreshold: 10 * time.Millisecond, SLAPercentile: 99})
	ctx := context.Background()
	for range 100 {
		h.Record(ctx, 0.5)
	}
	mustSample(t, v)
	s := current(t, v)
	if s.Runs.P99Seconds == nil || *s.Runs.P99Seconds < 0.1 {
		t.Fatalf("p99 after slow runs = %v, want >= 0.1", s.Runs.P99Seconds)
	}
	// Move the slow sample out of the window by ageing the history.
	v.mu.Lock()
	v.ring.each(func(x *sample) { x.at = x.at.Add(-2 * time.Second) })
	v.mu.Unlock()
	for range 100 {
		h.Record(ctx, 0.005)
	}
	mustSample(t, v)
	s = current(t, v)
	if s.Runs.Total != 200 || s.Runs.InWindow != 100 {
		t.Fatalf("total %d in window %d, want 200 and 100", s.Runs.Total, s.Runs.InWindow)
	}
	if s.Runs.P99Seconds == nil || *s.Runs.P99Seconds > 0.01 {
		t.Fatalf("p99 of the window = %v, want <= 0.01 (only the fast runs)", s.Runs.P99Seconds)
	}
	if s.Runs.P50Seconds == nil || math.Abs(*s.Runs.P50Seconds-0.005) > 0.005 {
		t.Fatalf("p50 of the window = %v, want about 0.005", s.Runs.P50Seconds)
	}
	if s.SLA == nil || s.SLA.Met == nil || !*s.SLA.Met {
		t.Fatalf("SLA = %+v, want met", s.SLA)
	}
	if s.Version != Version {
		t.Fatalf("version %d, want %d", s.Version, Version)
	}
}

func mustSample(t *testing.T, v *View) {
	t.Helper()
	if err := v.Sample(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func current(t *testing.T, v *View) Snapshot {
	t.Helper()
	var s Snapshot
	if err := json.Unmarshal(*v.latest.Load(), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSlowClientSkipsFrames: a client that takes nothing has its frame
// replaced, and broadcast never waits. A broadcast that blocked on a full
// client would hang here.
func TestSlowClientSkipsFrames(t *testing.T) {
	v := New(NewReader(), Config{})
	slow, _ := v.subscribe()
	fast, _ := v.subscribe()
	for i := range 100 {
		v.broadcast([]byte{byte(i)})
		<-fast.frames
	}
	if got := <-slow.frames; got[0] != 99 {
		t.Fatalf("slow client got frame %d, want the newest, 99", got[0])
	}
	if v.Skipped() != 99 {
		t.Fatalf("skipped %d frames, want 99", v.Skipped())
	}
}

// TestCheckToken: tokens an attacker would try first, or that break in a
// header, are refused with a reason; random ones pass.
func TestCheckToken(t *testing.T) {
	for _, c := range []struct{ token, err string }{
		{"9f3c1a7e5b2d8046c1e7", ""},
		{"Zq7-vR2m_Kp9wX4t", ""},
		{"correct-horse-battery-staple-42", ""},
		{"short", "too short"},
		{strings.Repeat(" ", 16), "spaces"},
		{"abcdefgh ijklmnop", "spaces"},
		{"abcdefgh\tijklmnop", "spaces"},
		{strings.Repeat("a", 16), "6 or more"},
		{strings.Repeat("ab", 10), "6 or more"},
		{"abcdefghijklmnop", "repeated or consecutive"},
		{"1234567890123456", "repeated or consecutive"},
		{"zyxwvutsrqponmlk", "repeated or consecutive"},
		{"aaaaaaaaaabcdefg", "repeated or consecutive"},
		{"acegikacegikacegik", "bits of randomness"},
	} {
		err := CheckToken(c.token)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("CheckToken(%q) = %v, want it accepted", c.token, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "openssl rand")):
			t.Errorf("CheckToken(%q) = %v, want a refusal saying %q and how to make a good one", c.token, err, c.err)
		}
	}
}

func TestResolveAddr(t *testing.T) {
	tok := "9f3c1a7e5b2d8046c1e7"
	for _, c := range []struct {
		in, token string
		remote    bool
		want, err string
	}{
		{in: "8080", want: "127.0.0.1:8080"},
		{in: ":0", want: "127.0.0.1:0"},
		{in: "localhost:9", want: "localhost:9"},
		{in: "[::1]:9", want: "[::1]:9"},
		{in: "0.0.0.0:9", err: "--ui-allow-remote"},
		{in: "0.0.0.0:9", remote: true, err: "--ui-token"},
		{in: "0.0.0.0:9", remote: true, token: "short", err: "16 characters"},
		{in: "0.0.0.0:9", remote: true, token: strings.Repeat("x", MinTokenLength), err: "too easy to guess"},
		{in: "0.0.0.0:9", remote: true, token: tok, want: "0.0.0.0:9"},
		{in: "nonsense", err: "want PORT or HOST:PORT"},
		{in: "1:99999", err: "0 to 65535"},
	} {
		got, err := ResolveAddr(c.in, c.remote, c.token)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ResolveAddr(%q) error %v, want one saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ResolveAddr(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// newView returns a view whose reader is on a MeterProvider.
func newView(t *testing.T, cfg Config) *View {
	t.Helper()
	r := NewReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return New(r, cfg)
}

func TestTokenAndHostGuard(t *testing.T) {
	v := newView(t, Config{})
	mustSample(t, v)
	tok := strings.Repeat("s", 20)
	srv := httptest.NewServer(v.Handler(tok))
	defer srv.Close()
	for _, c := range []struct {
		url, auth string
		want      int
	}{
		{"/api/v1/metrics/current", "", 401},
		{"/api/v1/metrics/current?token=wrong", "", 401},
		{"/api/v1/metrics/current?token=" + tok, "", 200},
		{"/api/v1/metrics/current", "Bearer " + tok, 200},
		{"/api/v1/report", "Bearer " + tok, 404},
		{"/api/v1/metrics/history?seconds=-1", "Bearer " + tok, 400},
	} {
		req, _ := http.NewRequest("GET", srv.URL+c.url, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.url, resp.StatusCode, c.want)
		}
		if strings.Contains(string(b), tok) {
			t.Errorf("GET %s: the token is in the answer", c.url)
		}
	}
	// No token: only loopback Host headers are answered.
	open := httptest.NewServer(v.Handler(""))
	defer open.Close()
	req, _ := http.NewRequest("GET", open.URL+"/api/v1/metrics/current", nil)
	req.Host = "attacker.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host got %d, want 403", resp.StatusCode)
	}
}

// TestStreamSendsSnapshots reads two events off the SSE stream.
func TestStreamSendsSnapshots(t *testing.T) {
	v := newView(t, Config{})
	mustSample(t, v)
	srv := httptest.NewServer(v.Handler(""))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	var seqs []uint64
	for len(seqs) < 2 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var s Snapshot
			if err := json.Unmarshal([]byte(data), &s); err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, s.Seq)
			if len(seqs) == 1 {
				mustSample(t, v)
			}
		}
	}
	if seqs[1] <= seqs[0] {
		t.Fatalf("stream sequence %v does not advance", seqs)
	}
}

// TestTimelineTitleReadsAsOnePhrase: the timeline panel's title is its
// heading followed by the text the page script puts in its tl-info span;
// together they read "Last profiled run 9: 12 operators, …", never
// "Last profiled runrun 9".
func TestTimelineTitleReadsAsOnePhrase(t *testing.T) {
	s := string(page)
	heading := regexp.MustCompile(`<h2>([^<]*)<span id="tl-info"`).FindStringSubmatch(s)
	info := regexp.MustCompile(`text\("tl-info", "([^"]*)" \+ tl\.run \+ "([^"]*)"`).FindStringSubmatch(s)
	if heading == nil || info == nil {
		t.Fatalf("page.html: the timeline heading or its tl-info script line is not where this test looks (heading %q, info %q)", heading, info)
	}
	got := heading[1] + info[1] + "9" + info[2] + "12 operators"
	if want := "Last profiled run 9: 12 operators"; got != want {
		t.Errorf("timeline title reads %q, want %q", got, want)
	}
}
