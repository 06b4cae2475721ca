package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
)

func TestOnceHandler(t *testing.T) {
	var buf bytes.Buffer
	h := &onceHandler{w: &buf, seen: map[string]int{}}
	for i := 0; i < 5; i++ {
		h.Handle(errors.New("export: connection refused"))
	}
	h.Handle(nil)
	if n := strings.Count(buf.String(), "connection refused"); n != 1 {
		t.Fatalf("the same error printed %d times, want once:\n%s", n, buf.String())
	}
	if r := h.repeats(); len(r) != 1 || !strings.Contains(r[0], "connection refused") || !strings.Contains(r[0], "5 times") {
		t.Errorf("repeats = %q, want the error and its count, 5", r)
	}
	for i := 0; i < 2*maxTelemetryErrors; i++ {
		h.Handle(errors.New(strings.Repeat("x", i+1)))
	}
	lines := strings.Count(buf.String(), "\n")
	if lines != maxTelemetryErrors+1 {
		t.Errorf("printed %d lines, want %d errors then one 'not shown' line", lines, maxTelemetryErrors+1)
	}
}

// TestSinksRedact: the error handler and the OpenTelemetry logger that
// installSinks puts in place hide header values, also in a malformed entry
// (the exporters log such an entry whole).
func TestSinksRedact(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization Bearer S3cretSink")
	var buf bytes.Buffer
	code := run(context.Background(), &env{stdout: io.Discard, stderr: &buf}, []string{"version"})
	if code != 0 {
		t.Fatalf("version: exit %d", code)
	}
	defer installSinks(io.Discard, nil)
	otel.Handle(errors.New("export failed: header authorization Bearer S3cretSink rejected"))
	otel.Handle(errors.New("export failed: header authorization Bearer S3cretSink rejected")) // once
	// The trace exporter reads the variable itself and logs the malformed
	// entry through the OpenTelemetry logger. It connects lazily: nothing
	// is dialed.
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint("127.0.0.1:1"), otlptracegrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	exp.Shutdown(context.Background())
	out := buf.String()
	if strings.Contains(out, "S3cretSink") {
		t.Errorf("a sink printed the secret:\n%s", out)
	}
	if strings.Count(out, "export failed: header <redacted> rejected") != 1 || !strings.Contains(out, `"input"="<redacted>"`) {
		t.Errorf("want the error once and the log line, redacted:\n%s", out)
	}
}

// TestDistinctLines: the errors a command joins are printed one each, a
// repeated one once with its count; an error that wraps several in one
// message, or spans lines, stays whole.
func TestDistinctLines(t *testing.T) {
	full := errors.New("write report: no space left on device")
	multi := errors.New("library not found; looked in:\n  - /opt/lib\n  - /usr/lib")
	wrapped := fmt.Errorf("%w (gave up: %w)", full, context.Canceled)
	err := errors.Join(full, errors.Join(wrapped, full), multi, full, nil)
	got := distinctLines(err)
	want := []string{full.Error() + " (3 times)", wrapped.Error(), multi.Error()}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("distinctLines = %q, want %q", got, want)
	}
	le := &lostError{lines: []string{"traces: 1 of 2 spans"}}
	if rest := without(errors.Join(full, le), le); rest == nil || rest.Error() != full.Error() {
		t.Errorf("without = %v, want the report error alone", rest)
	}
	if rest := without(le, le); rest != nil {
		t.Errorf("without(le, le) = %v", rest)
	}
}
