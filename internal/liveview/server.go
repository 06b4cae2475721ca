package liveview

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

//go:embed page.html
var page []byte

// MinTokenLength is the shortest token a remote live view accepts.
const MinTokenLength = 16

// ResolveAddr turns the --ui value into a listen address: a bare port
// ("8080" or ":8080") is 127.0.0.1:PORT. A host that is not loopback needs
// allowRemote and a token CheckToken accepts.
func ResolveAddr(addr string, allowRemote bool, token string) (string, error) {
	a, err := ListenAddr(addr)
	if err != nil {
		return "", fmt.Errorf("live view address %w", err)
	}
	host, port, _ := net.SplitHostPort(a)
	if !isLoopback(host) {
		if !allowRemote {
			return "", fmt.Errorf("live view address %q is not loopback: add --ui-allow-remote and a --ui-token to serve it beyond this machine", addr)
		}
		if token == "" {
			return "", fmt.Errorf("live view address %q is not loopback: it needs a --ui-token of %d characters or more", addr, MinTokenLength)
		}
		if err := CheckToken(token); err != nil {
			return "", fmt.Errorf("live view address %q is not loopback: --ui-token: %w", addr, err)
		}
	}
	return net.JoinHostPort(host, port), nil
}

// ListenAddr turns a listen flag's value into an address for net.Listen: a
// bare port ("8080" or ":8080") is 127.0.0.1:PORT, so a local listener binds
// to loopback unless its host is given. The error names the value.
func ListenAddr(addr string) (string, error) {
	a := strings.TrimSpace(addr)
	if a == "" {
		return "", fmt.Errorf("is empty: want PORT or HOST:PORT")
	}
	if _, err := strconv.Atoi(a); err == nil {
		a = ":" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "", fmt.Errorf("%q: want PORT or HOST:PORT", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler serves the page and the API. A non-empty token is required on
// every request, as "Authorization: Bearer TOKEN" or "?token=TOKEN".
// With no token, only requests whose Host is loopback are answered (a web
// page elsewhere cannot reach a loopback view through DNS rebinding).
func (v *View) Handler(token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("GET /api/v1/metrics/current", serveStored(&v.latest, http.StatusServiceUnavailable, "no sample yet: try again in a moment"))
	mux.HandleFunc("GET /api/v1/metrics/history", func(w http.ResponseWriter, r *http.Request) {
		secs := 60.0
		if q := r.URL.Query().Get("seconds"); q != "" {
			n, err := strconv.ParseFloat(q, 64)
			if err != nil || n <= 0 || n > DefaultHistory.Seconds() {
				jsonError(w, http.StatusBadRequest, fmt.Sprintf("seconds %q: want a number above 0 and at most %g", q, DefaultHistory.Seconds()))
				return
			}
			secs = n
		}
		h := v.History(time.Duration(secs * float64(time.Second)))
		writeValue(w, struct {
			Version   int        `json:"version"`
			Snapshots []Snapshot `json:"snapshots"`
		}{Version, h})
	})
	mux.HandleFunc("GET /api/v1/report", serveStored(&v.report, http.StatusNotFound, "no report yet: the bench writes it when it finishes"))
	mux.HandleFunc("GET /api/v1/timeline", func(w http.ResponseWriter, r *http.Request) {
		tl := v.Timeline()
		if tl == nil {
			jsonError(w, http.StatusNotFound, "no profiled run yet: operators appear once a run was profiled")
			return
		}
		writeValue(w, tl)
	})
	mux.HandleFunc("GET /api/v1/stream", v.stream)
	mux.HandleFunc("POST /api/v1/profile", v.profileHandler)
	return guard(token, mux)
}

func guard(token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if token == "" {
			host := r.Host
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			host = strings.Trim(host, "[]")
			if !isLoopback(host) {
				jsonError(w, http.StatusForbidden, "this live view answers loopback hosts only")
				return
			}
		} else {
			got := r.URL.Query().Get("token")
			if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
				got = strings.TrimPrefix(a, "Bearer ")
			}
			if subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				jsonError(w, http.StatusUnauthorized, "a valid token is required (Authorization: Bearer TOKEN, or ?token=TOKEN)")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// frameWriteTimeout drops a client that cannot take one frame in this long.
const frameWriteTimeout = 5 * time.Second

// stream sends every snapshot as a Server-Sent Event ("data: JSON").
func (v *View) stream(w http.ResponseWriter, r *http.Request) {
	c, ok := v.subscribe()
	if !ok {
		jsonError(w, http.StatusServiceUnavailable, fmt.Sprintf("too many stream clients (at most %d)", maxClients))
		return
	}
	defer v.unsubscribe(c)
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) error {
		_ = rc.SetWriteDeadline(time.Now().Add(frameWriteTimeout))
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		return rc.Flush()
	}
	if b := v.latest.Load(); b != nil {
		if send(*b) != nil {
			return
		}
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case b := <-c.frames:
			if send(b) != nil {
				return
			}
		}
	}
}

// serveStored serves the JSON last stored in p, or status with why when
// nothing is stored yet.
func serveStored(p *atomic.Pointer[[]byte], status int, why string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b := p.Load()
		if b == nil {
			jsonError(w, status, why)
			return
		}
		writeJSON(w, *b)
	}
}

func writeJSON(w http.ResponseWriter, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func writeValue(w http.ResponseWriter, v any) {
	b, err := jsonMarshal(v)
	if err != nil {
		jsonError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, b)
}

func jsonError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := jsonMarshal(struct {
		Version int    `json:"version"`
		Error   string `json:"error"`
	}{Version, msg})
	_, _ = w.Write(b)
}

// Server is a running live view.
type Server struct {
	URL    string // the page's address (with the token, when one is set)
	srv    *http.Server
	ln     net.Listener
	cancel context.CancelFunc
}

// Serve listens on addr (see ResolveAddr) and serves v until Close.
func Serve(v *View, addr string, allowRemote bool, token string) (*Server, error) {
	a, err := ResolveAddr(addr, allowRemote, token)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("live view: listen on %s: %w", a, err)
	}
	base, cancel := context.WithCancel(context.Background())
	s := &Server{ln: ln, cancel: cancel, srv: &http.Server{
		Handler: v.Handler(token), ReadHeaderTimeout: 5 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }, // Close ends the streams
	}}
	s.URL = "http://" + ln.Addr().String() + "/"
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server, ending the streams.
func (s *Server) Close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return s.srv.Close()
}
