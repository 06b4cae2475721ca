package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/internal/otlpjson"
	"github.com/ortel-dev/ortel/internal/testenv"
)

// TestPipeline serves a few pages with the real PaddleOCR models and checks
// the trace shape: request → stage → run, with operators under some runs.
func TestPipeline(t *testing.T) {
	testenv.RequireORT(t)
	for _, m := range []string{"ch_PP-OCRv4_det_infer.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx"} {
		testenv.Model(t, m)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	out := t.TempDir()
	var w bytes.Buffer
	if err := run(context.Background(), &w, 3, 160, out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "request 2:") {
		t.Fatalf("output:\n%s", w.String())
	}
	f, err := os.Open(filepath.Join(out, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byID := map[string]*tracepb.Span{}
	var spans []*tracepb.Span
	otlpjson.ReadTraces(f, func(req *coltracepb.ExportTraceServiceRequest) error {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					byID[string(s.SpanId)] = s
					spans = append(spans, s)
				}
			}
		}
		return nil
	})
	stages := map[string]int{}
	for _, s := range spans {
		if !strings.HasPrefix(s.Name, "run ") {
			continue
		}
		stage := byID[string(s.ParentSpanId)]
		if stage == nil {
			t.Fatalf("run span %q has no parent", s.Name)
		}
		req := byID[string(stage.ParentSpanId)]
		if req == nil || req.Name != "POST /ocr" {
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
	if err := run(context.Background(), &bytes.Buffer{}, 1, 100, t.TempDir()); err == nil || !strings.Contains(err.Error(), "multiple of 32") {
		t.Fatalf("err = %v", err)
	}
}
