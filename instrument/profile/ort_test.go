package profile

import (
	"path/filepath"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/test/testenv"
)

// writeProfile runs the PaddleOCR direction classifier runs times in a
// profiled session and returns the path of the profile ONNX Runtime wrote.
func writeProfile(t *testing.T, runs int) string {
	t.Helper()
	testenv.RequireORT(t)
	model := testenv.Model(t, "ch_ppocr_mobile_v2.0_cls_infer.onnx")

	opts, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer opts.Destroy()
	prefix := filepath.Join(t.TempDir(), "cls")
	if err := opts.EnableProfiling(prefix); err != nil {
		t.Fatal(err)
	}
	s, err := ort.NewDynamicAdvancedSession(model, []string{"x"}, []string{"softmax_0.tmp_0"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]float32, 1*3*48*192)
	for i := range data {
		data[i] = float32(i%255) / 255
	}
	in, err := ort.NewTensor(ort.NewShape(1, 3, 48, 192), data)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Destroy()
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Destroy()
	for range runs {
		if err := s.Run([]ort.Value{in}, []ort.Value{out}); err != nil {
			t.Fatal(err)
		}
	}
	// The profile is written when the session is destroyed.
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(prefix + "*.json")
	if err != nil || len(files) != 1 {
		t.Fatalf("profile files %v (%v), want exactly one", files, err)
	}
	return files[0]
}

// TestReadFreshORTProfile reads a profile just written by the real ONNX
// Runtime: one model_run per Run, and every kernel inside a run.
func TestReadFreshORTProfile(t *testing.T) {
	const runs = 5
	path := writeProfile(t, runs)

	var (
		evs  []Event
		runI []Event
	)
	warns, err := ReadFile(path, func(e *Event) error {
		evs = append(evs, e.Clone())
		if e.Name == "model_run" {
			runI = append(runI, e.Clone())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings on a profile from ONNX Runtime %v", warns)
	}
	if len(runI) != runs {
		t.Fatalf("%d model_run events, want %d", len(runI), runs)
	}
	kernels := 0
	for _, e := range evs {
		if !e.IsKernel() {
			continue
		}
		kernels++
		inside := 0
		for _, r := range runI {
			if e.TS >= r.TS && e.TS+e.Dur <= r.TS+r.Dur {
				inside++
			}
		}
		if inside != 1 {
			t.Errorf("kernel %s [%d, +%d] lies inside %d model_run intervals, want 1", e.Name, e.TS, e.Dur, inside)
		}
		if e.OpName == "" || e.Provider != "CPUExecutionProvider" || e.NodeIndex < 0 || e.NodeName() == "" {
			t.Errorf("kernel %s lacks args: op %q provider %q index %d", e.Name, e.OpName, e.Provider, e.NodeIndex)
		}
		if len(e.OutputShapes) == 0 || e.OutputSize < 0 {
			t.Errorf("kernel %s lacks its outputs: %v, %d bytes", e.Name, e.OutputShapes, e.OutputSize)
		}
	}
	if kernels == 0 || kernels%runs != 0 {
		t.Errorf("%d kernel events for %d runs, want the same number each run", kernels, runs)
	}
	// The model's first node reads the input we fed.
	for _, e := range evs {
		if e.IsKernel() {
			if len(e.InputShapes) == 0 || e.InputShapes[0].String() != "float[1,3,48,192]" {
				t.Errorf("first kernel %s inputs %v, want float[1,3,48,192] first", e.Name, e.InputShapes)
			}
			break
		}
	}
}
