package onnxgen

import "testing"

func TestDimAndValueInfoStrings(t *testing.T) {
	tests := []struct {
		v    ValueInfo
		want string
	}{
		{ValueInfo{Name: "x", Type: Float, Dims: []Dim{DimParam("batch"), DimValue(3), {Value: -1}}}, "x float[batch,3,?]"},
		{ValueInfo{Name: "s", Type: Int64}, "s int64[]"},
		{ValueInfo{Name: "u", Type: Bool, UnknownRank: true}, "u bool[...]"},
		{ValueInfo{Name: "z", Type: Float, Dims: FixedDims(0, 2)}, "z float[0,2]"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.v.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGraphLookups(t *testing.T) {
	m := MatMulAddChain(2, 4)
	g := &m.Graph
	w := g.Initializer("W_1")
	if w == nil || len(w.Floats) != 16 {
		t.Fatalf("Initializer(W_1) = %+v, want a 4x4 float tensor", w)
	}
	if g.Initializer("W_2") != nil {
		t.Error("Initializer(W_2) found a tensor in a 2-layer chain")
	}
	if n := g.Node("add_1"); n == nil || n.OpType != "Add" || n.Outputs[0] != "y" {
		t.Errorf("Node(add_1) = %+v, want the Add writing y", n)
	}
	if g.Node("missing") != nil {
		t.Error("Node(missing) found a node")
	}
	if got, want := m.NumParameters(), int64(2*(16+4)); got != want {
		t.Errorf("NumParameters = %d, want %d", got, want)
	}
	// The returned pointers alias the graph, so callers can tweak weights.
	w.Floats[0] = 42
	if g.Initializers[2].Floats[0] != 42 {
		t.Error("Initializer does not return the graph's own tensor")
	}
}
