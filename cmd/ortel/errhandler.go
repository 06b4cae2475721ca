package main

import (
	"fmt"
	"io"
	"sync"

	"go.opentelemetry.io/otel"
)

// maxTelemetryErrors caps the distinct telemetry errors printed per process.
const maxTelemetryErrors = 10

// onceHandler prints each distinct telemetry error once: a collector that
// is down fails every export the same way, and one line says it.
type onceHandler struct {
	w    io.Writer
	mu   sync.Mutex
	seen map[string]bool
}

func (h *onceHandler) Handle(err error) {
	if err == nil {
		return
	}
	msg := err.Error()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen[msg] {
		return
	}
	switch {
	case len(h.seen) < maxTelemetryErrors:
		fmt.Fprintf(h.w, "ortel: telemetry: %s\n", msg)
	case len(h.seen) == maxTelemetryErrors:
		fmt.Fprintf(h.w, "ortel: telemetry: further errors are not shown\n")
	}
	h.seen[msg] = true
}

// installErrorHandler routes OpenTelemetry's internal errors (failed
// exports, bad instruments) to w, once each.
func installErrorHandler(w io.Writer) {
	otel.SetErrorHandler(&onceHandler{w: w, seen: map[string]bool{}})
}
