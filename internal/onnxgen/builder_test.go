package onnxgen

import (
	"slices"
	"testing"
)

func TestBuilder(t *testing.T) {
	b := newBuilder("g", 1)
	x := b.input("x", Float, FixedDims(2, 3)...)
	w := b.weight("w", 0.5, 3, 4)
	shape := b.int64s("shape", []int64{2}, 4, 2)
	mm := b.node("MatMul", "mm", in(x, w))
	b.nodeTo("Reshape", "reshape", "y", in(mm, shape))
	b.output("y", Float, FixedDims(4, 2)...)
	m := b.model("doc")

	if err := m.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if mm != "mm" {
		t.Errorf("node output named %q, want it named after the node", mm)
	}
	wt := m.Graph.Initializer("w")
	if wt == nil || !slices.Equal(wt.Dims, []int64{3, 4}) || len(wt.Floats) != 12 {
		t.Fatalf("weight = %+v, want 3x4 floats", wt)
	}
	for _, v := range wt.Floats {
		if v < -0.5 || v >= 0.5 {
			t.Errorf("weight value %v outside [-0.5, 0.5)", v)
		}
	}
	if want := newPRNG(1).fill(12, 0.5); !slices.Equal(wt.Floats, want) {
		t.Error("weights are not the seeded PRNG's values")
	}
	if got := m.Graph.Node("reshape").Outputs; !slices.Equal(got, []string{"y"}) {
		t.Errorf("reshape outputs = %v, want [y]", got)
	}
	if m.Graph.Doc != "doc" || m.Graph.Name != "g" {
		t.Errorf("name/doc = %q/%q", m.Graph.Name, m.Graph.Doc)
	}
}
