package onnxgen

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/test/testenv"
)

// ioSpec is what GetInputOutputInfo must report for one input or output;
// -1 stands for a dynamic dimension.
type ioSpec struct {
	name string
	typ  ort.TensorElementDataType
	dims []int64
}

func (s ioSpec) String() string { return fmt.Sprintf("%s %v%v", s.name, s.typ, s.dims) }

func ortFloat() ort.TensorElementDataType { return ort.TensorElementDataTypeFloat }
func ortInt64() ort.TensorElementDataType { return ort.TensorElementDataTypeInt64 }

// writeModel writes m to a fresh temporary folder and returns the path.
func writeModel(t *testing.T, m Model, file string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), file)
	if err := m.WriteFile(p); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	return p
}

// checkIO asserts the inputs and outputs ONNX Runtime reports for the model
// file at path.
func checkIO(t *testing.T, path string, wantIn, wantOut []ioSpec) {
	t.Helper()
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		t.Fatalf("ONNX Runtime rejected %s: %v", filepath.Base(path), err)
	}
	compare := func(kind string, got []ort.InputOutputInfo, want []ioSpec) {
		t.Helper()
		var g []ioSpec
		for _, info := range got {
			if info.OrtValueType != ort.ONNXTypeTensor {
				t.Errorf("%s %q: type %v, want a tensor", kind, info.Name, info.OrtValueType)
			}
			g = append(g, ioSpec{info.Name, info.DataType, []int64(info.Dimensions)})
		}
		if fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("%ss reported by ONNX Runtime:\n got %v\nwant %v", kind, g, want)
		}
	}
	compare("input", ins, wantIn)
	compare("output", outs, wantOut)
}

// newSession opens the model at path with one intra-op thread (the test
// machine has two cores shared with other work) and destroys it at cleanup.
func newSession(t *testing.T, path string, inputs, outputs []string) *ort.DynamicAdvancedSession {
	t.Helper()
	testenv.RequireORT(t)
	opts, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatalf("NewSessionOptions: %v", err)
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		t.Fatalf("SetIntraOpNumThreads: %v", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		t.Fatalf("SetInterOpNumThreads: %v", err)
	}
	s, err := ort.NewDynamicAdvancedSession(path, inputs, outputs, opts)
	if err != nil {
		t.Fatalf("open %s in ONNX Runtime: %v", filepath.Base(path), err)
	}
	t.Cleanup(func() { s.Destroy() })
	return s
}

// tensor creates an ONNX Runtime tensor over data, destroyed at cleanup.
func tensor[T ort.TensorData](t *testing.T, data []T, dims ...int64) *ort.Tensor[T] {
	t.Helper()
	v, err := ort.NewTensor(ort.NewShape(dims...), data)
	if err != nil {
		t.Fatalf("NewTensor%v: %v", dims, err)
	}
	t.Cleanup(func() { v.Destroy() })
	return v
}

// run runs the session, letting ONNX Runtime allocate the outputs, which are
// destroyed at cleanup.
func run(t *testing.T, s *ort.DynamicAdvancedSession, inputs []ort.Value, nOut int) []ort.Value {
	t.Helper()
	outs := make([]ort.Value, nOut)
	err := s.Run(inputs, outs)
	for _, o := range outs {
		if o != nil {
			t.Cleanup(func() { o.Destroy() })
		}
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return outs
}

// floatsOf returns a copy of a float output's data and its shape.
func floatsOf(t *testing.T, v ort.Value) ([]float32, []int64) {
	t.Helper()
	ft, ok := v.(*ort.Tensor[float32])
	if !ok {
		t.Fatalf("output is %T, want *ort.Tensor[float32]", v)
	}
	return slices.Clone(ft.GetData()), []int64(ft.GetShape())
}

// closeEnough reports whether got and want agree within tol, relative to
// the larger of 1 and |want|.
func closeEnough(got, want []float32, tol float64) (int, bool) {
	if len(got) != len(want) {
		return -1, false
	}
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if math.IsNaN(d) || d > tol*math.Max(1, math.Abs(float64(want[i]))) {
			return i, false
		}
	}
	return 0, true
}

func assertClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if i, ok := closeEnough(got, want, tol); !ok {
		if i < 0 {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		t.Fatalf("%s: element %d is %v, want %v (tolerance %g)", what, i, got[i], want[i], tol)
	}
}

// matmul returns a[m,k]·b[k,n] computed in float64.
func matmul(a, b []float32, m, k, n int) []float32 {
	out := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			out[i*n+j] = float32(s)
		}
	}
	return out
}

// sample returns n deterministic values in [-1, 1) for test inputs.
func sample(n int, seed uint64) []float32 { return newPRNG(seed).fill(n, 1) }
