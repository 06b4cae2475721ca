package onnxgen_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/ortel-dev/ortel/internal/onnxgen"
)

// Build a one-node graph by hand and encode it.
func Example() {
	m := onnxgen.Model{Graph: onnxgen.Graph{
		Name:    "scale",
		Inputs:  []onnxgen.ValueInfo{{Name: "x", Type: onnxgen.Float, Dims: []onnxgen.Dim{onnxgen.DimParam("batch"), onnxgen.DimValue(4)}}},
		Outputs: []onnxgen.ValueInfo{{Name: "y", Type: onnxgen.Float, Dims: []onnxgen.Dim{onnxgen.DimParam("batch"), onnxgen.DimValue(4)}}},
		Initializers: []onnxgen.Tensor{
			onnxgen.FloatTensor("factor", nil, []float32{0.5}),
		},
		Nodes: []onnxgen.Node{
			{Name: "mul", OpType: "Mul", Inputs: []string{"x", "factor"}, Outputs: []string{"y"}},
		},
	}}
	b, err := m.Marshal()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Graph.Inputs[0], "->", m.Graph.Outputs[0], len(b) > 0)
	// Output: x float[batch,4] -> y float[batch,4] true
}

// Marshal refuses a graph whose nodes read values nothing produces, and
// says which node and value.
func ExampleModel_Marshal_error() {
	m := onnxgen.Model{Graph: onnxgen.Graph{
		Name:    "broken",
		Inputs:  []onnxgen.ValueInfo{{Name: "x", Type: onnxgen.Float}},
		Outputs: []onnxgen.ValueInfo{{Name: "y", Type: onnxgen.Float}},
		Nodes:   []onnxgen.Node{{Name: "add", OpType: "Add", Inputs: []string{"x", "bias"}, Outputs: []string{"y"}}},
	}}
	_, err := m.Marshal()
	fmt.Println(err)
	// Output: invalid ONNX model: graph "broken": node "add" (Add) reads "bias", which no graph input, initializer or earlier node produces
}

func ExampleModel_WriteFile() {
	dir, err := os.MkdirTemp("", "onnxgen-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	if err := onnxgen.LargeMatMul(256, 256, 256).WriteFile(filepath.Join(dir, "matmul.onnx")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("FLOPs per run:", onnxgen.MatMulFLOPs(256, 256, 256))
	// Output: FLOPs per run: 33554432
}

func ExampleMatMulAddChain() {
	m := onnxgen.MatMulAddChain(2, 8)
	for _, n := range m.Graph.Nodes {
		fmt.Println(n.Name, n.OpType, n.Inputs, "->", n.Outputs)
	}
	// Output:
	// matmul_0 MatMul [x W_0] -> [matmul_0]
	// add_0 Add [matmul_0 b_0] -> [add_0]
	// matmul_1 MatMul [add_0 W_1] -> [matmul_1]
	// add_1 Add [matmul_1 b_1] -> [y]
}

// The Decoder follows the Hugging Face/Optimum naming of inputs and outputs;
// a prefill feeds past tensors of shape [batch, Heads, 0, HeadDim].
func ExampleDecoder() {
	cfg := onnxgen.DecoderConfig{Layers: 1, Heads: 4, HeadDim: 8, Vocab: 100}
	m := onnxgen.Decoder(cfg)
	for _, v := range m.Graph.Inputs {
		fmt.Println("input ", v)
	}
	for _, v := range m.Graph.Outputs {
		fmt.Println("output", v)
	}
	// Output:
	// input  input_ids int64[batch,sequence]
	// input  attention_mask int64[batch,total_sequence]
	// input  past_key_values.0.key float[batch,4,past_sequence,8]
	// input  past_key_values.0.value float[batch,4,past_sequence,8]
	// output logits float[batch,sequence,100]
	// output present.0.key float[batch,4,total_sequence,8]
	// output present.0.value float[batch,4,total_sequence,8]
}
