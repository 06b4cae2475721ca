package onnxgen

import (
	"errors"
	"fmt"
)

// ErrInvalidModel is wrapped by every error Validate (and so Marshal and
// WriteFile) returns for a model that breaks ONNX's rules or was built from
// impossible arguments; test for it with errors.Is.
var ErrInvalidModel = errors.New("invalid ONNX model")

// Producers recorded in a scope other than node indexes.
const (
	byGraphInput  = -1
	byInitializer = -2
)

// scope maps the value names a graph defines to what defines them (a node
// index, byGraphInput or byInitializer), chained to the enclosing graph's
// scope for subgraphs. Descriptions are built only for error messages.
type scope struct {
	parent  *scope
	g       *Graph
	defined map[string]int
}

// lookup reports whether name is defined here or in an enclosing scope and
// describes what defines it.
func (s *scope) lookup(name string) (func() string, bool) {
	for ; s != nil; s = s.parent {
		if by, ok := s.defined[name]; ok {
			g := s.g
			return func() string { return describeProducer(g, by) }, true
		}
	}
	return nil, false
}

func describeProducer(g *Graph, by int) string {
	switch by {
	case byGraphInput:
		return "graph input"
	case byInitializer:
		return "initializer"
	}
	return describeNode(&g.Nodes[by], by)
}

// checker carries what a whole-model check needs across subgraphs.
type checker struct {
	opsets map[string]int // imported domains
}

func describeNode(n *Node, i int) string {
	if n.Name != "" {
		return fmt.Sprintf("node %q (%s)", n.Name, n.OpType)
	}
	return fmt.Sprintf("node #%d (%s)", i, n.OpType)
}

func graphLabel(g *Graph) string {
	if g.Name == "" {
		return "graph (unnamed)"
	}
	return fmt.Sprintf("graph %q", g.Name)
}

func checkValueInfo(kind string, v *ValueInfo) error {
	if v.Name == "" {
		return fmt.Errorf("a %s has an empty name", kind)
	}
	if !v.Type.valid() {
		return fmt.Errorf("%s %q has no valid element type (Type is %v)", kind, v.Name, v.Type)
	}
	return nil
}

// graph checks g, whose values may also refer to the values of outer.
func (c *checker) graph(g *Graph, outer *scope) error {
	if err := c.graphBody(g, outer); err != nil {
		return fmt.Errorf("%s: %w", graphLabel(g), err)
	}
	return nil
}

func (c *checker) graphBody(g *Graph, outer *scope) error {
	s := &scope{parent: outer, g: g, defined: make(map[string]int, len(g.Inputs)+len(g.Initializers)+len(g.Nodes))}
	define := func(name string, by int) error {
		if prev, ok := s.lookup(name); ok {
			return fmt.Errorf("value %q is produced twice: by %s and by %s; every value name must be produced once", name, prev(), describeProducer(g, by))
		}
		s.defined[name] = by
		return nil
	}

	for i := range g.Inputs {
		if err := checkValueInfo("graph input", &g.Inputs[i]); err != nil {
			return err
		}
		if err := define(g.Inputs[i].Name, byGraphInput); err != nil {
			return err
		}
	}
	inits := make(map[string]bool, len(g.Initializers))
	for i := range g.Initializers {
		t := &g.Initializers[i]
		if t.Name == "" {
			return fmt.Errorf("initializer #%d has an empty name", i)
		}
		if inits[t.Name] {
			return fmt.Errorf("initializer %q is listed twice", t.Name)
		}
		inits[t.Name] = true
		if err := t.check(); err != nil {
			return fmt.Errorf("initializer %q: %w", t.Name, err)
		}
		if _, isInput := s.defined[t.Name]; isInput {
			continue // an initializer may give a graph input its default value
		}
		if err := define(t.Name, byInitializer); err != nil {
			return err
		}
	}

	// Where each node output is produced, to explain inputs that refer to
	// a later node.
	producer := make(map[string]int)
	for i := range g.Nodes {
		for _, o := range g.Nodes[i].Outputs {
			if _, seen := producer[o]; o != "" && !seen {
				producer[o] = i
			}
		}
	}

	names := make(map[string]int)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.OpType == "" {
			return fmt.Errorf("node #%d (name %q) has no OpType", i, n.Name)
		}
		desc := func() string { return describeNode(n, i) }
		if n.Name != "" {
			if j, dup := names[n.Name]; dup {
				return fmt.Errorf("node name %q is used by node #%d and node #%d; node names must be unique", n.Name, j, i)
			}
			names[n.Name] = i
		}
		if n.Domain != "" && n.Domain != "ai.onnx" {
			if _, ok := c.opsets[n.Domain]; !ok {
				return fmt.Errorf("%s uses operator domain %q, but the model imports no opset for it; add it to Model.Opsets", desc(), n.Domain)
			}
		}
		for _, in := range n.Inputs {
			if in == "" {
				continue
			}
			if _, ok := s.lookup(in); ok {
				continue
			}
			if j, later := producer[in]; later {
				return fmt.Errorf("%s reads %q, which %s produces after it; list nodes in topological order", desc(), in, describeNode(&g.Nodes[j], j))
			}
			return fmt.Errorf("%s reads %q, which no graph input, initializer or earlier node produces", desc(), in)
		}
		attrs := make(map[string]bool, len(n.Attrs))
		for k := range n.Attrs {
			a := &n.Attrs[k]
			if err := c.attr(a, s); err != nil {
				return fmt.Errorf("%s: %w", desc(), err)
			}
			if attrs[a.Name] {
				return fmt.Errorf("%s has attribute %q twice", desc(), a.Name)
			}
			attrs[a.Name] = true
		}
		outputs := 0
		for _, o := range n.Outputs {
			if o == "" {
				continue
			}
			outputs++
			if err := define(o, i); err != nil {
				return err
			}
		}
		if outputs == 0 {
			return fmt.Errorf("%s has no outputs", desc())
		}
	}

	if len(g.Outputs) == 0 {
		return errors.New("the graph declares no outputs")
	}
	outs := make(map[string]bool, len(g.Outputs))
	for i := range g.Outputs {
		o := &g.Outputs[i]
		if err := checkValueInfo("graph output", o); err != nil {
			return err
		}
		if outs[o.Name] {
			return fmt.Errorf("graph output %q is declared twice", o.Name)
		}
		outs[o.Name] = true
		if _, ok := s.lookup(o.Name); !ok {
			return fmt.Errorf("graph output %q is not produced by any node, graph input or initializer", o.Name)
		}
	}
	for i := range g.ValueInfo {
		v := &g.ValueInfo[i]
		if err := checkValueInfo("value_info entry", v); err != nil {
			return err
		}
		if _, ok := s.lookup(v.Name); !ok {
			return fmt.Errorf("value_info entry %q names a value nothing produces", v.Name)
		}
	}
	return nil
}

func (c *checker) attr(a *Attr, s *scope) error {
	if a.Name == "" {
		return errors.New("an attribute has an empty name")
	}
	switch a.Type {
	case AttrTypeFloat, AttrTypeInt, AttrTypeString, AttrTypeFloats, AttrTypeInts, AttrTypeStrings:
	case AttrTypeTensor:
		if a.T == nil {
			return fmt.Errorf("tensor attribute %q has no tensor (T is nil)", a.Name)
		}
		if err := a.T.check(); err != nil {
			return fmt.Errorf("attribute %q: tensor %q: %w", a.Name, a.T.Name, err)
		}
	case AttrTypeGraph:
		if a.G == nil {
			return fmt.Errorf("graph attribute %q has no graph (G is nil)", a.Name)
		}
		if err := c.graph(a.G, s); err != nil {
			return fmt.Errorf("attribute %q: %w", a.Name, err)
		}
	default:
		return fmt.Errorf("attribute %q has unsupported type %v; build it with AttrInt, AttrFloat, AttrTensor or another Attr helper", a.Name, a.Type)
	}
	return nil
}
