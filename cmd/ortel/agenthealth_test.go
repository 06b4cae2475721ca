package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestAgentHealthProbes drives the health handler with a scripted clock
// and export count: ready only after an export, live while exports keep
// finishing, failing (503, saying why) once none finished for longer than
// the limit, and live again when they resume.
func TestAgentHealthProbes(t *testing.T) {
	var exports atomic.Int64
	now := time.Unix(1_000_000, 0)
	h := newAgentHealth(exports.Load, 45*time.Second, func() time.Time { return now })
	steps := []struct {
		name           string
		advance        time.Duration
		export         bool
		healthz, ready int
		body           string
	}{
		{"started, no export yet", 0, false, 200, 503, "waiting for the first metric export"},
		{"still within the limit", 40 * time.Second, false, 200, 503, "waiting for the first metric export"},
		{"first export", 1 * time.Second, true, 200, 200, "ok"},
		{"one interval later", 15 * time.Second, true, 200, 200, "ok"},
		{"exports stop, within the limit", 45 * time.Second, false, 200, 200, "ok"},
		{"exports stop, past the limit", 1 * time.Second, false, 503, 503, "no metric export finished for 46s (limit 45s)"},
		{"exports resume", 30 * time.Second, true, 200, 200, "ok"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			now = now.Add(s.advance)
			if s.export {
				exports.Add(1)
			}
			for path, want := range map[string]int{"/healthz": s.healthz, "/readyz": s.ready} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != want {
					t.Errorf("%s: %d, want %d (%q)", path, rec.Code, want, rec.Body.String())
				}
				if want != 200 && !strings.Contains(rec.Body.String(), s.body) {
					t.Errorf("%s body %q, want %q", path, rec.Body.String(), s.body)
				}
			}
		})
	}
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "/", 404},
		{http.MethodGet, "/metrics", 404},
		{http.MethodPost, "/healthz", 405},
		{http.MethodHead, "/readyz", 200},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
		if rec.Code != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, rec.Code, c.want)
		}
	}
}

// TestAgentHealthEndpoint runs the agent with --health-addr on a free
// loopback port: /readyz turns 200 once the first export (to files here)
// finished, /healthz answers 200, and the agent still exits 0 when stopped.
func TestAgentHealthEndpoint(t *testing.T) {
	t.Setenv("ORTEL_HOST_ROOT", hostRoot(t, false))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	urls := make(chan string, 1)
	healthStarted = func(u string) { urls <- u }
	defer func() { healthStarted = nil }()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &env{stdout: io.Discard, stderr: &stderr}, []string{"agent", "--interval", "100ms", "--out", t.TempDir(), "--health-addr", "127.0.0.1:0"})
	}()
	var base string
	select {
	case base = <-urls:
	case code := <-done:
		t.Fatalf("agent exited %d before serving its health:\n%s", code, stderr.String())
	}
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The first export comes one interval after the start; poll until it
	// has, with a deadline far beyond it for a loaded machine.
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := get("/readyz")
		if code == 200 {
			break
		}
		if code != 503 || !strings.Contains(body, "first metric export") || time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, body := get("/healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("agent exit %d:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "ortel agent: health at "+base+"/healthz") {
		t.Errorf("stderr does not say where the health endpoint is:\n%s", stderr.String())
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the health endpoint still answers after the agent stopped")
	}
}

// TestAgentHealthBadAddr: a malformed --health-addr is a usage error (2)
// naming the flag, before anything starts.
func TestAgentHealthBadAddr(t *testing.T) {
	for _, addr := range []string{"not-an-address", "127.0.0.1:99999", " "} {
		code, _, stderr := ortel(t, "agent", "--health-addr", addr)
		if code != 2 || !strings.Contains(stderr, "--health-addr") {
			t.Errorf("--health-addr %q: exit %d, stderr %q; want 2 naming the flag", addr, code, stderr)
		}
	}
}
