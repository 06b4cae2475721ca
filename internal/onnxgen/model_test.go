package onnxgen

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/test/testenv"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	m := MatMulAddChain(1, 2)
	p := filepath.Join(dir, "m.onnx")
	if err := m.WriteFile(p); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := m.Marshal()
	if string(got) != string(want) {
		t.Error("the file does not hold the Marshal bytes")
	}

	tests := []struct {
		name  string
		model Model
		path  string
		want  []string
	}{
		{"missing folder", m, filepath.Join(dir, "no", "such", "dir", "m.onnx"), []string{`write model "` + filepath.Join(dir, "no", "such", "dir", "m.onnx") + `"`, "no such file or directory"}},
		{"invalid model", MatMulAddChain(0, 1), filepath.Join(dir, "bad.onnx"), []string{`write model "` + filepath.Join(dir, "bad.onnx") + `"`, "n and dim must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.model.WriteFile(tt.path)
			if err == nil {
				t.Fatal("WriteFile succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.onnx")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an invalid model left a file behind: %v", err)
	}
}

// TestCustomGraphRunsInORT builds a graph by hand with a tensor attribute
// (Constant), graph attributes (If branches reading an outer value), a
// scalar input and custom metadata, and runs it in ONNX Runtime.
func TestCustomGraphRunsInORT(t *testing.T) {
	testenv.RequireORT(t)
	branch := func(name, op string) Graph {
		return Graph{
			Name:    name,
			Outputs: []ValueInfo{{Name: name + "_out", Type: Float, Dims: []Dim{DimParam("n")}}},
			Nodes:   []Node{{Name: name + "_" + op, OpType: op, Inputs: []string{"shifted", "two"}, Outputs: []string{name + "_out"}}},
		}
	}
	m := Model{
		Producer:     "onnxgen-test",
		ModelVersion: 5,
		Metadata:     map[string]string{"purpose": "test"},
		Graph: Graph{
			Name: "custom",
			Inputs: []ValueInfo{
				{Name: "x", Type: Float, Dims: []Dim{DimParam("n")}},
				{Name: "cond", Type: Bool},
			},
			Outputs: []ValueInfo{{Name: "y", Type: Float, Dims: []Dim{DimParam("n")}}},
			Initializers: []Tensor{
				FloatTensor("two", nil, []float32{2}),
			},
			Nodes: []Node{
				{Name: "one", OpType: "Constant", Outputs: []string{"one"},
					Attrs: []Attr{AttrTensor("value", FloatTensor("one_value", nil, []float32{1}))}},
				{Name: "shift", OpType: "Add", Inputs: []string{"x", "one"}, Outputs: []string{"shifted"}},
				{Name: "if", OpType: "If", Inputs: []string{"cond"}, Outputs: []string{"y"},
					Attrs: []Attr{AttrGraph("then_branch", branch("then", "Mul")), AttrGraph("else_branch", branch("else", "Sub"))}},
			},
		},
	}
	p := writeModel(t, m, "custom.onnx")
	checkIO(t, p,
		[]ioSpec{{"x", ortFloat(), []int64{-1}}, {"cond", ort.TensorElementDataTypeBool, []int64{}}},
		[]ioSpec{{"y", ortFloat(), []int64{-1}}})

	meta, err := ort.GetModelMetadata(p)
	if err != nil {
		t.Fatalf("GetModelMetadata: %v", err)
	}
	defer meta.Destroy()
	if got, _ := meta.GetProducerName(); got != "onnxgen-test" {
		t.Errorf("producer = %q, want onnxgen-test", got)
	}
	if got, _ := meta.GetGraphName(); got != "custom" {
		t.Errorf("graph name = %q, want custom", got)
	}
	if got, _ := meta.GetVersion(); got != 5 {
		t.Errorf("model version = %d, want 5", got)
	}
	if v, ok, err := meta.LookupCustomMetadataMap("purpose"); err != nil || !ok || v != "test" {
		t.Errorf("metadata purpose = %q, %v, %v; want test", v, ok, err)
	}

	s := newSession(t, p, []string{"x", "cond"}, []string{"y"})
	x := []float32{1, -3, 0.5}
	for _, tt := range []struct {
		cond bool
		want []float32
	}{
		{true, []float32{4, -4, 3}},     // (x+1)*2
		{false, []float32{0, -4, -0.5}}, // (x+1)-2
	} {
		cond, err := ort.NewScalar(tt.cond)
		if err != nil {
			t.Fatalf("NewScalar: %v", err)
		}
		t.Cleanup(func() { cond.Destroy() })
		got, _ := floatsOf(t, run(t, s, []ort.Value{tensor(t, x, 3), cond}, 1)[0])
		assertClose(t, "y", got, tt.want, 0)
	}
}
