package onnxgen

import (
	"fmt"
	"testing"
)

func TestAttrHelpers(t *testing.T) {
	tests := []struct {
		attr Attr
		want string
	}{
		{AttrInt("axis", -1), "axis int -1"},
		{AttrInts("perm", 0, 2, 1), "perm ints [0 2 1]"},
		{AttrFloat("epsilon", 0.5), "epsilon float 0.5"},
		{AttrFloats("scales", 1, 2), "scales floats [1 2]"},
		{AttrString("auto_pad", "SAME_UPPER"), "auto_pad string SAME_UPPER"},
		{AttrStrings("names", "a", "b"), "names strings [a b]"},
		{AttrTensor("value", Int64Tensor("c", nil, []int64{3})), "value tensor c"},
		{AttrGraph("body", Graph{Name: "loop"}), "body graph loop"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			a := tt.attr
			var v any
			switch a.Type {
			case AttrTypeInt:
				v = a.I
			case AttrTypeInts:
				v = a.Ints
			case AttrTypeFloat:
				v = a.F
			case AttrTypeFloats:
				v = a.Floats
			case AttrTypeString:
				v = a.S
			case AttrTypeStrings:
				v = a.Strings
			case AttrTypeTensor:
				v = a.T.Name
			case AttrTypeGraph:
				v = a.G.Name
			}
			if got := fmt.Sprintf("%s %v %v", a.Name, a.Type, v); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if got := AttrType(42).String(); got != "AttrType(42)" {
		t.Errorf("AttrType(42).String() = %q", got)
	}
}
