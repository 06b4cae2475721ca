package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

// healthFlagHelp documents --health-addr (agent).
const healthFlagHelp = "serve the agent's health over HTTP on ADDR (a bare port is 127.0.0.1:PORT; default: off), " +
	"for Kubernetes probes (GET): /healthz answers 200 while metric exports keep finishing (failed ones count: " +
	"a collector outage is the spool's business, not a restart's) and 503 when none finished for 3 intervals plus " +
	"the export timeout; /readyz answers 200 once the first export finished"

// agentHealth answers the health probes from the count of finished metric
// export attempts: the count moves at every interval while the collection
// and export loop runs, whatever the collector does.
type agentHealth struct {
	attempts func() int64 // finished metric export attempts so far
	stale    time.Duration
	now      func() time.Time

	mu       sync.Mutex
	last     int64
	lastMove time.Time
}

// newAgentHealth starts the clock: the first export is due within stale.
func newAgentHealth(attempts func() int64, stale time.Duration, now func() time.Time) *agentHealth {
	return &agentHealth{attempts: attempts, stale: stale, now: now, lastMove: now(), last: attempts()}
}

// check reads the count once: live while it moved within stale, ready once
// it moved at all and still live. why says what a failing probe sees.
func (h *agentHealth) check() (live, ready bool, why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	if n := h.attempts(); n != h.last {
		h.last, h.lastMove = n, now
	}
	if idle := now.Sub(h.lastMove); idle > h.stale {
		return false, false, fmt.Sprintf("no metric export finished for %s (limit %s)", idle.Round(time.Second), h.stale)
	}
	if h.last == 0 {
		return true, false, "waiting for the first metric export"
	}
	return true, true, ""
}

func (h *agentHealth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	live, ready, why := h.check()
	ok := live
	switch r.URL.Path {
	case "/healthz":
	case "/readyz":
		ok = ready
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, why)
		return
	}
	fmt.Fprintln(w, "ok")
}

// healthServer is a running --health-addr listener.
type healthServer struct {
	srv *http.Server
	url string
}

// serveHealth listens on addr (a bare port is loopback) and serves h.
func serveHealth(addr string, h http.Handler) (*healthServer, error) {
	a, err := liveview.ListenAddr(addr)
	if err != nil {
		return nil, usagef("--health-addr %v", err)
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("--health-addr: listen on %s: %w", a, err)
	}
	s := &healthServer{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
		url: "http://" + ln.Addr().String(),
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// close stops the listener; nil does nothing.
func (s *healthServer) close() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
}

// healthStarted, when set (tests), is told the health server's URL.
var healthStarted func(url string)

// startAgentHealth serves --health-addr for the agent from its telemetry's
// export counts; nil (and nothing served) when addr is empty. A metric
// export is due every interval and may take up to the export timeout.
func startAgentHealth(e *env, addr string, tel *telemetry.Telemetry, interval time.Duration, quiet bool) (*healthServer, error) {
	if addr == "" {
		return nil, nil
	}
	timeout := tel.Resolved.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	attempts := func() int64 { st := tel.Stats(); return st.MetricExports + st.MetricExportFailures }
	s, err := serveHealth(addr, newAgentHealth(attempts, 3*interval+timeout, time.Now))
	if err != nil {
		return nil, err
	}
	if !quiet {
		fmt.Fprintf(e.stderr, "ortel agent: health at %s/healthz and %s/readyz\n", s.url, s.url)
	}
	if healthStarted != nil {
		healthStarted(s.url)
	}
	return s, nil
}

// checkHealthAddr validates --health-addr before any work starts.
func checkHealthAddr(addr string) error {
	if addr == "" {
		return nil
	}
	if _, err := liveview.ListenAddr(addr); err != nil {
		return usagef("--health-addr %v", err)
	}
	return nil
}
