package onnxgen

import "strconv"

// AttrType is the type of a node attribute (AttributeProto.AttributeType).
type AttrType int32

// The attribute types onnx.proto defines that this package encodes.
const (
	AttrTypeUndefined AttrType = 0
	AttrTypeFloat     AttrType = 1
	AttrTypeInt       AttrType = 2
	AttrTypeString    AttrType = 3
	AttrTypeTensor    AttrType = 4
	AttrTypeGraph     AttrType = 5
	AttrTypeFloats    AttrType = 6
	AttrTypeInts      AttrType = 7
	AttrTypeStrings   AttrType = 8
)

var attrTypeNames = map[AttrType]string{
	AttrTypeUndefined: "undefined",
	AttrTypeFloat:     "float",
	AttrTypeInt:       "int",
	AttrTypeString:    "string",
	AttrTypeTensor:    "tensor",
	AttrTypeGraph:     "graph",
	AttrTypeFloats:    "floats",
	AttrTypeInts:      "ints",
	AttrTypeStrings:   "strings",
}

// String returns the type's name, such as "ints".
func (a AttrType) String() string {
	if s, ok := attrTypeNames[a]; ok {
		return s
	}
	return "AttrType(" + strconv.Itoa(int(a)) + ")"
}

// Attr is a node attribute. Type says which of the value fields is used;
// the fields mirror AttributeProto's (f, i, s, t, g, floats, ints,
// strings). Build attributes with AttrInt, AttrFloat and the other helpers.
type Attr struct {
	Name    string
	Type    AttrType
	F       float32
	I       int64
	S       string
	T       *Tensor
	G       *Graph
	Floats  []float32
	Ints    []int64
	Strings []string
}

// AttrInt returns an int attribute, such as Softmax's axis.
func AttrInt(name string, v int64) Attr { return Attr{Name: name, Type: AttrTypeInt, I: v} }

// AttrInts returns an ints attribute, such as Transpose's perm.
func AttrInts(name string, v ...int64) Attr { return Attr{Name: name, Type: AttrTypeInts, Ints: v} }

// AttrFloat returns a float attribute, such as LayerNormalization's epsilon.
func AttrFloat(name string, v float32) Attr { return Attr{Name: name, Type: AttrTypeFloat, F: v} }

// AttrFloats returns a floats attribute.
func AttrFloats(name string, v ...float32) Attr {
	return Attr{Name: name, Type: AttrTypeFloats, Floats: v}
}

// AttrString returns a string attribute, such as Conv's auto_pad.
func AttrString(name, v string) Attr { return Attr{Name: name, Type: AttrTypeString, S: v} }

// AttrStrings returns a strings attribute.
func AttrStrings(name string, v ...string) Attr {
	return Attr{Name: name, Type: AttrTypeStrings, Strings: v}
}

// AttrTensor returns a tensor attribute, such as Constant's value.
func AttrTensor(name string, t Tensor) Attr { return Attr{Name: name, Type: AttrTypeTensor, T: &t} }

// AttrGraph returns a graph attribute, such as If's then_branch.
func AttrGraph(name string, g Graph) Attr { return Attr{Name: name, Type: AttrTypeGraph, G: &g} }
