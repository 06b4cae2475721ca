package onnxgen

import (
	"strconv"
	"strings"
)

// Dim is one dimension of a declared shape: a fixed size (Value >= 0), a
// named symbolic size (Param, such as "batch"; ONNX Runtime reports it as
// -1), or, with Value < 0 and no Param, an unnamed unknown size.
type Dim struct {
	Value int64
	Param string
}

// DimValue returns a fixed dimension.
func DimValue(v int64) Dim { return Dim{Value: v} }

// DimParam returns a symbolic dimension named name, such as "batch".
func DimParam(name string) Dim { return Dim{Param: name} }

// FixedDims returns fixed dimensions, one per argument.
func FixedDims(dims ...int64) []Dim {
	out := make([]Dim, len(dims))
	for i, d := range dims {
		out[i] = Dim{Value: d}
	}
	return out
}

// String returns the dimension as ONNX tools print it: the number, the
// parameter name, or "?".
func (d Dim) String() string {
	switch {
	case d.Param != "":
		return d.Param
	case d.Value >= 0:
		return strconv.FormatInt(d.Value, 10)
	}
	return "?"
}

// ValueInfo declares a graph input, output or intermediate value: its name,
// element type and shape. Empty Dims declare a scalar; UnknownRank leaves
// the shape out altogether.
type ValueInfo struct {
	Name        string
	Type        DataType
	Dims        []Dim
	UnknownRank bool
	Doc         string
}

// String returns the value as "name float[batch,4]".
func (v ValueInfo) String() string {
	var b strings.Builder
	b.WriteString(v.Name)
	b.WriteByte(' ')
	b.WriteString(v.Type.String())
	if v.UnknownRank {
		b.WriteString("[...]")
		return b.String()
	}
	b.WriteByte('[')
	for i, d := range v.Dims {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d.String())
	}
	b.WriteByte(']')
	return b.String()
}

// Node is one operator application. Domain "" is the default ONNX domain.
// An empty string in Inputs or Outputs marks an optional input or output
// that is left out.
type Node struct {
	Name    string
	OpType  string
	Domain  string
	Inputs  []string
	Outputs []string
	Attrs   []Attr
	Doc     string
}

// Graph is an ONNX graph: its interface (Inputs, Outputs), its constants
// (Initializers) and its Nodes, which must be listed in topological order
// (every node after the nodes producing its inputs), as ONNX requires.
// ValueInfo optionally declares the types of intermediate values.
type Graph struct {
	Name         string
	Doc          string
	Inputs       []ValueInfo
	Outputs      []ValueInfo
	Nodes        []Node
	Initializers []Tensor
	ValueInfo    []ValueInfo
}

// Initializer returns the initializer called name, or nil when the graph
// has none by that name.
func (g *Graph) Initializer(name string) *Tensor {
	for i := range g.Initializers {
		if g.Initializers[i].Name == name {
			return &g.Initializers[i]
		}
	}
	return nil
}

// Node returns the node called name, or nil when the graph has none by that
// name.
func (g *Graph) Node(name string) *Node {
	for i := range g.Nodes {
		if g.Nodes[i].Name == name {
			return &g.Nodes[i]
		}
	}
	return nil
}

// NumParameters returns the number of elements in all initializers.
func (g *Graph) NumParameters() int64 {
	var n int64
	for i := range g.Initializers {
		if e := g.Initializers[i].NumElements(); e > 0 {
			n += e
		}
	}
	return n
}
