package main

import (
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/go-logr/stdr"
	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"

	"github.com/ortel-dev/ortel/internal/telemetry"
)

// maxTelemetryErrors caps the distinct telemetry errors printed per process.
const maxTelemetryErrors = 10

// onceHandler prints each distinct telemetry error once: a collector that
// is down fails every export the same way, and one line says it; repeats
// says at exit how many times each came. Header values are redacted before
// the message is compared or printed.
type onceHandler struct {
	w      io.Writer
	redact *telemetry.Redactor
	mu     sync.Mutex
	seen   map[string]int
	order  []string
}

func (h *onceHandler) Handle(err error) {
	if err == nil {
		return
	}
	msg := h.redact.Redact(err.Error())
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[msg] > 0 {
		h.seen[msg]++
		return
	}
	switch {
	case len(h.seen) < maxTelemetryErrors:
		fmt.Fprintf(h.w, "ortel: telemetry: %s\n", msg)
		h.order = append(h.order, msg)
	case len(h.seen) == maxTelemetryErrors:
		fmt.Fprintf(h.w, "ortel: telemetry: further errors are not shown\n")
	}
	h.seen[msg] = 1
}

// repeats says, for each error printed that came more than once, how
// many times it came in all.
func (h *onceHandler) repeats() []string {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, msg := range h.order {
		if n := h.seen[msg]; n > 1 {
			out = append(out, fmt.Sprintf("the error %q came %d times in all", msg, n))
		}
	}
	return out
}

// installSinks routes the loggers of ortel's dependencies to stderr, each
// through the redactor r, so no OTLP header value reaches the terminal by
// any path:
//   - OpenTelemetry's internal errors (failed exports, a watched process
//     that exited), once each;
//   - OpenTelemetry's internal logger (the exporters log malformed header
//     variables with their text);
//   - the standard library's log package.
//
// run calls it for each command, with the command's stderr, and prints
// the handler's repeats at the end.
func installSinks(stderr io.Writer, r *telemetry.Redactor) *onceHandler {
	w := r.Writer(stderr)
	log.SetOutput(w)
	h := &onceHandler{w: w, redact: r, seen: map[string]int{}}
	otel.SetErrorHandler(h)
	otel.SetLogger(stdr.New(log.New(w, "ortel: telemetry: ", 0)))
	return h
}

// installGRPCLogger routes gRPC's logger to stderr through r, at the level
// GRPC_GO_LOG_SEVERITY_LEVEL asks (errors only by default, as gRPC does).
// gRPC requires it to be set before any gRPC call: main calls it first.
func installGRPCLogger(stderr io.Writer, r *telemetry.Redactor) {
	w := r.Writer(stderr)
	info, warn := io.Discard, io.Discard
	switch strings.ToLower(os.Getenv("GRPC_GO_LOG_SEVERITY_LEVEL")) {
	case "info":
		info, warn = w, w
	case "warning":
		warn = w
	}
	grpclog.SetLoggerV2(grpclog.NewLoggerV2(info, warn, w))
}
