package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

func TestStream(t *testing.T) {
	testenv.RequireORT(t)
	model := testenv.Model(t, "silero_vad_v5.onnx")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	var w bytes.Buffer
	if err := run(context.Background(), &w, 2, model); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "62 frames of 32 ms") || !strings.Contains(w.String(), "speech 0.") && !strings.Contains(w.String(), "speech 1.") {
		t.Errorf("output:\n%s", w.String())
	}
}

func TestBadSeconds(t *testing.T) {
	if err := run(context.Background(), &bytes.Buffer{}, -1, "silero.onnx"); err == nil {
		t.Fatal("negative length accepted")
	}
}
