package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestOnceHandler(t *testing.T) {
	var buf bytes.Buffer
	h := &onceHandler{w: &buf, seen: map[string]bool{}}
	for i := 0; i < 5; i++ {
		h.Handle(errors.New("export: connection refused"))
	}
	h.Handle(nil)
	if n := strings.Count(buf.String(), "connection refused"); n != 1 {
		t.Fatalf("the same error printed %d times, want once:\n%s", n, buf.String())
	}
	for i := 0; i < 2*maxTelemetryErrors; i++ {
		h.Handle(errors.New(strings.Repeat("x", i+1)))
	}
	lines := strings.Count(buf.String(), "\n")
	if lines != maxTelemetryErrors+1 {
		t.Errorf("printed %d lines, want %d errors then one 'not shown' line", lines, maxTelemetryErrors+1)
	}
}
