package onnxgen

import (
	"errors"
	"strings"
	"testing"
)

// reluGraph is a valid one-node graph the error cases start from.
func reluGraph() Graph {
	return Graph{
		Name:    "g",
		Inputs:  []ValueInfo{{Name: "x", Type: Float, Dims: FixedDims(2)}},
		Outputs: []ValueInfo{{Name: "y", Type: Float, Dims: FixedDims(2)}},
		Nodes:   []Node{{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"y"}}},
	}
}

func TestValidateAcceptsValidGraphs(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Model)
	}{
		{"one node", func(*Model) {}},
		{"initializer overriding an input", func(m *Model) {
			m.Graph.Initializers = []Tensor{FloatTensor("x", []int64{2}, []float32{1, 2})}
		}},
		{"left-out optional input and output", func(m *Model) {
			m.Graph.Nodes[0] = Node{Name: "clip", OpType: "Clip", Inputs: []string{"x", "", ""}, Outputs: []string{"y"}}
		}},
		{"unnamed nodes", func(m *Model) {
			m.Graph.Nodes = []Node{
				{OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"h"}},
				{OpType: "Relu", Inputs: []string{"h"}, Outputs: []string{"y"}},
			}
		}},
		{"subgraph reading an outer value", func(m *Model) {
			then := Graph{Name: "then", Outputs: []ValueInfo{{Name: "t", Type: Float, UnknownRank: true}},
				Nodes: []Node{{Name: "neg", OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"t"}}}}
			m.Graph.Inputs = append(m.Graph.Inputs, ValueInfo{Name: "c", Type: Bool})
			m.Graph.Nodes[0] = Node{Name: "if", OpType: "If", Inputs: []string{"c"}, Outputs: []string{"y"},
				Attrs: []Attr{AttrGraph("then_branch", then), AttrGraph("else_branch", then)}}
		}},
		{"imported custom domain", func(m *Model) {
			m.Opsets = map[string]int{"com.microsoft": 1}
			m.Graph.Nodes[0].Domain = "com.microsoft"
		}},
		{"value_info of an intermediate", func(m *Model) {
			m.Graph.ValueInfo = []ValueInfo{{Name: "y", Type: Float}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Model{Graph: reluGraph()}
			tt.edit(&m)
			if err := m.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if _, err := m.Marshal(); err != nil {
				t.Fatalf("Marshal: %v", err)
			}
		})
	}
}

func TestValidateRejectsBrokenGraphs(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Model)
		want string
	}{
		{"undefined input", func(m *Model) { m.Graph.Nodes[0].Inputs = []string{"nope"} },
			`invalid ONNX model: graph "g": node "relu" (Relu) reads "nope", which no graph input, initializer or earlier node produces`},
		{"duplicate output", func(m *Model) {
			m.Graph.Nodes = append(m.Graph.Nodes, Node{Name: "again", OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"y"}})
		}, `value "y" is produced twice: by node "relu" (Relu) and by node "again" (Neg)`},
		{"output named like an input", func(m *Model) { m.Graph.Nodes[0].Outputs = []string{"x"} },
			`value "x" is produced twice: by graph input and by node "relu" (Relu)`},
		{"out of order", func(m *Model) {
			m.Graph.Nodes = []Node{
				{Name: "second", OpType: "Relu", Inputs: []string{"h"}, Outputs: []string{"y"}},
				{Name: "first", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"h"}},
			}
		}, `node "second" (Relu) reads "h", which node "first" (Relu) produces after it; list nodes in topological order`},
		{"graph output not produced", func(m *Model) { m.Graph.Outputs[0].Name = "z" },
			`graph output "z" is not produced by any node, graph input or initializer`},
		{"no outputs", func(m *Model) { m.Graph.Outputs = nil }, "the graph declares no outputs"},
		{"output declared twice", func(m *Model) { m.Graph.Outputs = append(m.Graph.Outputs, m.Graph.Outputs[0]) },
			`graph output "y" is declared twice`},
		{"input without type", func(m *Model) { m.Graph.Inputs[0].Type = Undefined },
			`graph input "x" has no valid element type`},
		{"empty input name", func(m *Model) { m.Graph.Inputs[0].Name = "" }, "a graph input has an empty name"},
		{"missing op type", func(m *Model) { m.Graph.Nodes[0].OpType = "" }, `node #0 (name "relu") has no OpType`},
		{"node without outputs", func(m *Model) { m.Graph.Nodes[0].Outputs = []string{""} }, `node "relu" (Relu) has no outputs`},
		{"duplicate node name", func(m *Model) {
			m.Graph.Nodes = []Node{
				{Name: "n", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"h"}},
				{Name: "n", OpType: "Relu", Inputs: []string{"h"}, Outputs: []string{"y"}},
			}
		}, `node name "n" is used by node #0 and node #1`},
		{"tensor data too short", func(m *Model) {
			m.Graph.Initializers = []Tensor{FloatTensor("w", []int64{2, 2}, []float32{1, 2, 3})}
		}, `initializer "w": shape [2 2] needs 4 elements but Floats holds 3`},
		{"tensor data of the wrong type", func(m *Model) {
			m.Graph.Initializers = []Tensor{{Name: "w", Type: Int64, Floats: []float32{1}}}
		}, `initializer "w": type is int64 but the data is in Floats`},
		{"tensor data in two fields", func(m *Model) {
			m.Graph.Initializers = []Tensor{{Name: "w", Type: Float, Floats: []float32{1}, Raw: []byte{0, 0, 0, 0}}}
		}, `exactly one of Floats, Int64s, Int32s or Raw, but 2 are set`},
		{"raw data of a partial element", func(m *Model) {
			m.Graph.Initializers = []Tensor{{Name: "w", Type: Float16, Raw: []byte{1, 2, 3}}}
		}, `the Raw field holds 3 bytes, not a whole number of 2-byte float16 elements`},
		{"initializer listed twice", func(m *Model) {
			w := FloatTensor("w", nil, []float32{1})
			m.Graph.Initializers = []Tensor{w, w}
		}, `initializer "w" is listed twice`},
		{"duplicate attribute", func(m *Model) { m.Graph.Nodes[0].Attrs = []Attr{AttrInt("a", 1), AttrInt("a", 2)} },
			`node "relu" (Relu) has attribute "a" twice`},
		{"attribute without type", func(m *Model) { m.Graph.Nodes[0].Attrs = []Attr{{Name: "a"}} },
			`attribute "a" has unsupported type undefined`},
		{"tensor attribute without tensor", func(m *Model) { m.Graph.Nodes[0].Attrs = []Attr{{Name: "value", Type: AttrTypeTensor}} },
			`tensor attribute "value" has no tensor`},
		{"broken tensor attribute", func(m *Model) {
			m.Graph.Nodes[0].Attrs = []Attr{AttrTensor("value", Int64Tensor("c", []int64{3}, nil))}
		}, `attribute "value": tensor "c": no data: shape [3] needs 3 elements`},
		{"broken subgraph", func(m *Model) {
			m.Graph.Nodes[0].Attrs = []Attr{AttrGraph("body", Graph{Name: "sub", Outputs: []ValueInfo{{Name: "q", Type: Float}}})}
		}, `node "relu" (Relu): attribute "body": graph "sub": graph output "q" is not produced`},
		{"domain not imported", func(m *Model) { m.Graph.Nodes[0].Domain = "com.microsoft" },
			`node "relu" (Relu) uses operator domain "com.microsoft", but the model imports no opset for it`},
		{"default domain in Opsets", func(m *Model) { m.Opsets = map[string]int{"": 17} },
			`Model.Opsets lists the default domain ""`},
		{"value_info of nothing", func(m *Model) { m.Graph.ValueInfo = []ValueInfo{{Name: "ghost", Type: Float}} },
			`value_info entry "ghost" names a value nothing produces`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Model{Graph: reluGraph()}
			tt.edit(&m)
			_, err := m.Marshal()
			if err == nil {
				t.Fatal("Marshal succeeded, want an error")
			}
			if !errors.Is(err, ErrInvalidModel) {
				t.Errorf("error %q does not wrap ErrInvalidModel", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n %s\nwant it to contain:\n %s", err, tt.want)
			}
			if err2 := m.Validate(); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Validate = %v, want the Marshal error", err2)
			}
		})
	}
}
