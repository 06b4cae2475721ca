package instrument

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestCreationFailureRecordsErrorType: when ONNX Runtime cannot create the
// session (no such file, a truncated real model, bytes that are no model),
// onnxruntime.session.creation.duration still gets its point, and that
// point carries error.type, as the create_session span does. A successful
// creation's point carries none.
func TestCreationFailureRecordsErrorType(t *testing.T) {
	testenv.RequireORT(t)
	vad, err := os.ReadFile(testenv.Model(t, "silero_vad_v5.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.onnx")
	if err := os.WriteFile(truncated, vad[:len(vad)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "vad.onnx")
	if err := os.WriteFile(whole, vad, 0o644); err != nil {
		t.Fatal(err)
	}
	// Silero VAD v5's signature.
	inputs, outputs := []string{"input", "state", "sr"}, []string{"output", "stateN"}

	type create func(p *providers) error
	dynamicFile := func(path string) create {
		return func(p *providers) error {
			s, err := NewDynamicSession(context.Background(), path, inputs, outputs, nil, p.opts(WithModelName("vad"))...)
			if err == nil {
				s.Close(context.Background())
			}
			return err
		}
	}
	tests := []struct {
		name   string
		create create
		fails  bool
	}{
		{"missing file", dynamicFile(filepath.Join(dir, "missing.onnx")), true},
		{"truncated model", dynamicFile(truncated), true},
		{"not a model, in memory", func(p *providers) error {
			_, err := NewDynamicSessionWithONNXData(context.Background(), []byte("this is not an ONNX model"), inputs, outputs, nil, p.opts(WithModelName("vad"))...)
			return err
		}, true},
		{"advanced session, truncated model", func(p *providers) error {
			_, err := NewAdvancedSession(context.Background(), truncated, inputs, outputs, []ort.Value{}, []ort.Value{}, nil, p.opts(WithModelName("vad"))...)
			return err
		}, true},
		{"the whole model", dynamicFile(whole), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProviders(t)
			err := tt.create(p)
			if (err != nil) != tt.fails {
				t.Fatalf("create: %v, want failure %v", err, tt.fails)
			}
			spans := spansNamed(p.spans, "create_session vad")
			if len(spans) != 1 {
				t.Fatalf("%d create_session spans, want 1", len(spans))
			}
			spanType, spanHas := attrs(spans[0].Attributes())["error.type"]
			if failed := spans[0].Status().Code == codes.Error; failed != tt.fails || spanHas != tt.fails {
				t.Errorf("span status %v, error.type %q; want failure %v", spans[0].Status(), spanType.AsString(), tt.fails)
			}

			m, ok := metricByName(p.collect(t), "onnxruntime.session.creation.duration")
			if !ok {
				t.Fatal("onnxruntime.session.creation.duration not recorded")
			}
			pts := m.Data.(metricdata.Histogram[float64]).DataPoints
			if len(pts) != 1 || pts[0].Count != 1 {
				t.Fatalf("creation histogram points %+v, want one point of count 1", pts)
			}
			got, has := pts[0].Attributes.Value("error.type")
			if has != tt.fails {
				t.Fatalf("creation histogram attributes %v: error.type present %v, want %v", pts[0].Attributes.ToSlice(), has, tt.fails)
			}
			if tt.fails && (got.AsString() == "" || got.AsString() != spanType.AsString()) {
				t.Errorf("histogram error.type %q, span error.type %q; want the same, non-empty", got.AsString(), spanType.AsString())
			}
			if name, _ := pts[0].Attributes.Value("onnxruntime.model.name"); name.AsString() != "vad" {
				t.Errorf("histogram model name %q, want vad", name.AsString())
			}
		})
	}
}
