package onnxgen

// builder assembles the ready-made models: it names values after the node
// that produces them and draws weights from a seeded PRNG.
type builder struct {
	g   Graph
	rng *prng
}

func newBuilder(name string, seed uint64) *builder {
	return &builder{g: Graph{Name: name}, rng: newPRNG(seed)}
}

func (b *builder) input(name string, t DataType, dims ...Dim) string {
	b.g.Inputs = append(b.g.Inputs, ValueInfo{Name: name, Type: t, Dims: dims})
	return name
}

func (b *builder) output(name string, t DataType, dims ...Dim) {
	b.g.Outputs = append(b.g.Outputs, ValueInfo{Name: name, Type: t, Dims: dims})
}

// weight adds a float initializer of the given shape with values drawn
// uniformly from [-scale, scale).
func (b *builder) weight(name string, scale float32, dims ...int64) string {
	n := numElements(dims)
	b.g.Initializers = append(b.g.Initializers, FloatTensor(name, dims, b.rng.fill(int(n), scale)))
	return name
}

// floats adds a float initializer with the given values.
func (b *builder) floats(name string, dims []int64, v ...float32) string {
	b.g.Initializers = append(b.g.Initializers, FloatTensor(name, dims, v))
	return name
}

// int64s adds an int64 initializer with the given values.
func (b *builder) int64s(name string, dims []int64, v ...int64) string {
	b.g.Initializers = append(b.g.Initializers, Int64Tensor(name, dims, v))
	return name
}

// node adds a node whose single output value is named like the node, and
// returns that name.
func (b *builder) node(op, name string, inputs []string, attrs ...Attr) string {
	return b.nodeTo(op, name, name, inputs, attrs...)
}

// nodeTo adds a node with a single output value named out.
func (b *builder) nodeTo(op, name, out string, inputs []string, attrs ...Attr) string {
	b.g.Nodes = append(b.g.Nodes, Node{Name: name, OpType: op, Inputs: inputs, Outputs: []string{out}, Attrs: attrs})
	return out
}

func (b *builder) model(doc string) Model {
	b.g.Doc = doc
	return Model{Graph: b.g}
}

func in(names ...string) []string { return names }
