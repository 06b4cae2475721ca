package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestRunSessionOptionsOnDet: PaddleOCR det at a small input size with
// --provider cpu --opt-level extended --save-optimized: the optimized
// model is written and loads, and report.json records every option.
func TestRunSessionOptionsOnDet(t *testing.T) {
	testenv.RequireORT(t)
	model := testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx")
	saved := filepath.Join(t.TempDir(), "sub", "det.extended.onnx")
	cpu, err := ParseProvider("cpu")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{
		ModelPath: model, Shapes: map[string][]int64{"x": {1, 3, 64, 64}}, Runs: 3, Warmup: 1, IntraOpThreads: 1, ProfileRuns: 1,
		Session: SessionOptions{
			OptLevel: "extended", ExecutionMode: "sequential", SaveOptimized: saved,
			Config: map[string]string{"session.intra_op.allow_spinning": "0"}, Providers: []Provider{cpu},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(saved)
	if err != nil || st.Size() == 0 {
		t.Fatalf("optimized model: %v", err)
	}
	if _, _, err := ort.GetInputOutputInfo(saved); err != nil {
		t.Errorf("the saved model does not load: %v", err)
	}
	so := rep.Config.Session
	if so == nil || so.OptLevel != "extended" || so.ExecutionMode != "sequential" || so.SaveOptimized != saved ||
		so.Config["session.intra_op.allow_spinning"] != "0" || len(so.Providers) != 1 || so.Providers[0] != "CPUExecutionProvider" {
		t.Errorf("recorded session options %+v", so)
	}
	if got := strings.Join(rep.Runtime.Providers, ","); got != "CPUExecutionProvider" {
		t.Errorf("runtime providers %q", got)
	}
	if rep.Operators == nil || rep.Operators.NodesByProvider["CPUExecutionProvider"] == 0 {
		t.Errorf("operators %+v", rep.Operators)
	}
}

// TestRunOptLevelChangesTheGraph: with optimizations disabled the profiled
// graph keeps more nodes than at the extended level (fusions), so the
// level really reaches ONNX Runtime.
func TestRunOptLevelChangesTheGraph(t *testing.T) {
	testenv.RequireORT(t)
	model := testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx")
	nodes := func(level string) int {
		rep, err := Run(context.Background(), Config{
			ModelPath: model, Shapes: map[string][]int64{"x": {1, 3, 64, 64}}, Runs: 1, Warmup: 0, IntraOpThreads: 1, ProfileRuns: 1,
			Session: SessionOptions{OptLevel: level},
		})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Operators.Nodes
	}
	off, ext := nodes("disable"), nodes("extended")
	if off <= ext {
		t.Errorf("nodes per run: %d with optimizations disabled, %d extended; want more when disabled", off, ext)
	}
}

func TestRunUnavailableProvider(t *testing.T) {
	model := dynModel(t)
	p, err := ParseProvider("openvino")
	if err != nil {
		t.Fatal(err)
	}
	avail, err := ortlib.AvailableProviders()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range avail {
		if a == p.Name {
			t.Skipf("this ONNX Runtime build has %s", p.Name)
		}
	}
	_, err = Run(context.Background(), Config{ModelPath: model, Runs: 1, Session: SessionOptions{Providers: []Provider{p}}})
	if err == nil || !strings.Contains(err.Error(), "OpenVINOExecutionProvider is not in this ONNX Runtime build") ||
		!strings.Contains(err.Error(), "available: ") || !strings.Contains(err.Error(), "CPUExecutionProvider") {
		t.Errorf("err = %v, want one naming the provider and listing the available ones", err)
	}
}

func TestParseSessionFlags(t *testing.T) {
	for _, s := range []string{"CUDA", "cuda", "CUDAExecutionProvider", " trt", "dml"} {
		if _, err := ParseProvider(s); err != nil {
			t.Errorf("ParseProvider(%q): %v", s, err)
		}
	}
	if _, err := ParseProvider("gpu"); err == nil || !strings.Contains(err.Error(), "cuda") {
		t.Errorf("ParseProvider(gpu) = %v, want the known names", err)
	}
	if _, err := ParseOptLevel("max"); err == nil {
		t.Error("optimization level max accepted")
	}
	if _, err := ParseExecutionMode("async"); err == nil {
		t.Error("execution mode async accepted")
	}
	s := SessionOptions{ProviderOptions: map[string]string{"device_id": "0"}}
	if err := s.validate(); err == nil {
		t.Error("provider options without a provider other than cpu accepted")
	}
}
