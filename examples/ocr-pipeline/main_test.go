package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestPipeline serves a few pages with the real PaddleOCR models and checks
// the trace shape: request → stage → run, with operators under some runs.
func TestPipeline(t *testing.T) {
	testenv.RequireORT(t)
	var dir string
	for _, m := range []string{"ch_PP-OCRv4_det_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx"} {
		dir = filepath.Dir(testenv.Model(t, m))
	}
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+r.Endpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
	var w bytes.Buffer
	if err := run(context.Background(), &w, 3, 160, dir); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "request 2:") {
		t.Fatalf("output:\n%s", w.String())
	}
	byID := map[string]otlptest.Span{}
	spans := r.Spans()
	for _, s := range spans {
		byID[string(s.SpanId)] = s
	}
	stages := map[string]int{}
	for _, s := range spans {
		if !strings.HasPrefix(s.Name, "run ") {
			continue
		}
		stage, found := byID[string(s.ParentSpanId)]
		if !found {
			t.Fatalf("run span %q has no parent", s.Name)
		}
		req, found := byID[string(stage.ParentSpanId)]
		if !found || req.Name != "POST /ocr" {
			t.Fatalf("stage %q is not under a request span", stage.Name)
		}
		stages[stage.Name]++
	}
	for _, name := range []string{"detect", "classify", "recognize"} {
		if stages[name] == 0 {
			t.Errorf("no run under stage %q (stages: %v)", name, stages)
		}
	}
	if stages["detect"] != 3 {
		t.Errorf("detect runs = %d, want one per request", stages["detect"])
	}
}

func TestBadSize(t *testing.T) {
	if err := run(context.Background(), &bytes.Buffer{}, 1, 100, "."); err == nil || !strings.Contains(err.Error(), "multiple of 32") {
		t.Fatalf("err = %v", err)
	}
}
