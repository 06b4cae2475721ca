package onnxgen

import (
	"fmt"
	"math"
)

// Seeds of the ready-made models' weights. Fixed, so every call returns the
// same weights and tests can recompute outputs in Go.
const (
	seedMatMulAddChain   = 1
	seedDynamicBatch     = 2
	seedElementwiseChain = 3
	seedConv             = 4
	seedFoldedWeight     = 5
)

// matmulScale keeps activations at about the same size through a stack of
// dim×dim matrix products: uniform values in [-s, s) have variance s²/3.
func matmulScale(fanIn int) float32 {
	return float32(math.Sqrt(3 / float64(fanIn)))
}

// MatMulAddChain returns a chain of n dense layers without activation:
// input "x" float [1,dim], then for i = 0..n-1 a MatMul node "matmul_i" with
// weight initializer "W_i" [dim,dim] and an Add node "add_i" with bias
// initializer "b_i" [dim]; the last Add writes output "y" float [1,dim].
// The graph has 2n nodes.
func MatMulAddChain(n, dim int) Model {
	if n < 1 || dim < 1 {
		return invalidModel("MatMulAddChain(n=%d, dim=%d): n and dim must be at least 1", n, dim)
	}
	b := newBuilder("matmul_add_chain", seedMatMulAddChain)
	x := b.input("x", Float, FixedDims(1, int64(dim))...)
	d := int64(dim)
	for i := range n {
		w := b.weight(fmt.Sprintf("W_%d", i), matmulScale(dim), d, d)
		bias := b.weight(fmt.Sprintf("b_%d", i), 0.1, d)
		mm := b.node("MatMul", fmt.Sprintf("matmul_%d", i), in(x, w))
		out := fmt.Sprintf("add_%d", i)
		if i == n-1 {
			out = "y"
		}
		x = b.nodeTo("Add", fmt.Sprintf("add_%d", i), out, in(mm, bias))
	}
	b.output("y", Float, FixedDims(1, d)...)
	return b.model(fmt.Sprintf("%d MatMul+Add layers of width %d", n, dim))
}

// DynamicBatch returns a stack of dense layers with a symbolic batch
// dimension: input "x" float ["batch",dim], then for i = 0..layers-1 a
// MatMul "matmul_i" (weight "W_i" [dim,dim]), an Add "add_i" (bias "b_i"
// [dim]) and a Relu "relu_i"; the last Relu writes output "y" float
// ["batch",dim]. Rows are independent, so each row of a batch gives the
// same result as that row run alone.
func DynamicBatch(dim, layers int) Model {
	if dim < 1 || layers < 1 {
		return invalidModel("DynamicBatch(dim=%d, layers=%d): dim and layers must be at least 1", dim, layers)
	}
	b := newBuilder("dynamic_batch", seedDynamicBatch)
	d := int64(dim)
	x := b.input("x", Float, DimParam("batch"), DimValue(d))
	for i := range layers {
		w := b.weight(fmt.Sprintf("W_%d", i), matmulScale(dim), d, d)
		bias := b.weight(fmt.Sprintf("b_%d", i), 0.1, d)
		mm := b.node("MatMul", fmt.Sprintf("matmul_%d", i), in(x, w))
		add := b.node("Add", fmt.Sprintf("add_%d", i), in(mm, bias))
		out := fmt.Sprintf("relu_%d", i)
		if i == layers-1 {
			out = "y"
		}
		x = b.nodeTo("Relu", fmt.Sprintf("relu_%d", i), out, in(add))
	}
	b.output("y", Float, DimParam("batch"), DimValue(d))
	return b.model(fmt.Sprintf("%d MatMul+Add+Relu layers of width %d with a dynamic batch", layers, dim))
}

// ElementwiseChain returns a memory-bound model: input "x" float [size],
// then for i = 0..n-1 an Add "add_i" of scalar initializer "c_i" (in
// [-0.5,0.5)) and a Mul "mul_i" by scalar initializer "m_i" (in [0.9,1.1));
// the last Mul writes output "y" float [size]. So y = (...((x+c_0)·m_0 +
// c_1)·m_1 ...). The graph has 2n nodes.
func ElementwiseChain(n int, size int64) Model {
	if n < 1 || size < 1 {
		return invalidModel("ElementwiseChain(n=%d, size=%d): n and size must be at least 1", n, size)
	}
	b := newBuilder("elementwise_chain", seedElementwiseChain)
	x := b.input("x", Float, DimValue(size))
	for i := range n {
		c := b.floats(fmt.Sprintf("c_%d", i), nil, b.rng.uniform(0.5))
		m := b.floats(fmt.Sprintf("m_%d", i), nil, 1+b.rng.uniform(0.1))
		add := b.node("Add", fmt.Sprintf("add_%d", i), in(x, c))
		out := fmt.Sprintf("mul_%d", i)
		if i == n-1 {
			out = "y"
		}
		x = b.nodeTo("Mul", fmt.Sprintf("mul_%d", i), out, in(add, m))
	}
	b.output("y", Float, DimValue(size))
	return b.model(fmt.Sprintf("%d Add+Mul pairs over %d floats", n, size))
}

// LargeMatMul returns a compute-bound model for peak FLOP/s: inputs "a"
// float [m,k] and "b" float [k,n], one MatMul node "matmul", output "c"
// float [m,n]. It has no weights; one run costs MatMulFLOPs(m, k, n).
func LargeMatMul(m, k, n int) Model {
	if m < 1 || k < 1 || n < 1 {
		return invalidModel("LargeMatMul(m=%d, k=%d, n=%d): all dimensions must be at least 1", m, k, n)
	}
	b := newBuilder("large_matmul", 0)
	a := b.input("a", Float, FixedDims(int64(m), int64(k))...)
	bb := b.input("b", Float, FixedDims(int64(k), int64(n))...)
	b.nodeTo("MatMul", "matmul", "c", in(a, bb))
	b.output("c", Float, FixedDims(int64(m), int64(n))...)
	return b.model(fmt.Sprintf("one [%d,%d]x[%d,%d] MatMul", m, k, k, n))
}

// MatMulFLOPs returns the floating-point operations in one run of
// LargeMatMul(m, k, n): 2·m·k·n, a multiply and an add per term.
func MatMulFLOPs(m, k, n int) int64 { return 2 * int64(m) * int64(k) * int64(n) }

// Bandwidth returns a memory-bound model for peak bytes/s: inputs "a" and
// "b" float [size], one Add node "add", output "c" float [size]. One run
// moves BandwidthBytes(size) bytes.
func Bandwidth(size int64) Model {
	if size < 1 {
		return invalidModel("Bandwidth(size=%d): size must be at least 1", size)
	}
	b := newBuilder("bandwidth", 0)
	a := b.input("a", Float, DimValue(size))
	bb := b.input("b", Float, DimValue(size))
	b.nodeTo("Add", "add", "c", in(a, bb))
	b.output("c", Float, DimValue(size))
	return b.model(fmt.Sprintf("element-wise Add of two %d-float inputs", size))
}

// BandwidthBytes returns the bytes one run of Bandwidth(size) reads and
// writes: two float inputs read and one float output written, 12·size.
func BandwidthBytes(size int64) int64 { return 12 * size }

// Conv returns a convolution layer with "same" padding: input "x" float
// ["batch",inChannels,"height","width"], a Conv node "conv" with weight
// "W" [outChannels,inChannels,kernel,kernel], bias "B" [outChannels],
// stride 1 and padding kernel/2 on every side, then a Relu node "relu"
// writing output "y" float ["batch",outChannels,"height","width"]. kernel
// must be odd.
func Conv(inChannels, outChannels, kernel int) Model {
	if inChannels < 1 || outChannels < 1 || kernel < 1 || kernel%2 == 0 {
		return invalidModel("Conv(inChannels=%d, outChannels=%d, kernel=%d): channels must be at least 1 and kernel a positive odd number", inChannels, outChannels, kernel)
	}
	b := newBuilder("conv", seedConv)
	ci, co, k := int64(inChannels), int64(outChannels), int64(kernel)
	x := b.input("x", Float, DimParam("batch"), DimValue(ci), DimParam("height"), DimParam("width"))
	w := b.weight("W", matmulScale(inChannels*kernel*kernel), co, ci, k, k)
	bias := b.weight("B", 0.1, co)
	p := k / 2
	conv := b.node("Conv", "conv", in(x, w, bias),
		AttrInts("kernel_shape", k, k), AttrInts("pads", p, p, p, p), AttrInts("strides", 1, 1))
	b.nodeTo("Relu", "relu", "y", in(conv))
	b.output("y", Float, DimParam("batch"), DimValue(co), DimParam("height"), DimParam("width"))
	return b.model(fmt.Sprintf("%dx%d Conv from %d to %d channels, then Relu", kernel, kernel, inChannels, outChannels))
}

// FoldedWeight returns a model whose weight is computed from constants:
// input "x" float [1,dim]; a MatMul node "weight" multiplies initializers
// "A" and "B" (both [dim,dim]) into the weight, and a MatMul node "matmul"
// multiplies x by it into output "y" float [1,dim]. ONNX Runtime's constant
// folding (every optimization level but "disable") computes the weight
// once, when the session is created; with optimizations disabled it is
// computed in every run, which then costs 2·dim³ floating-point operations
// more than the 2·dim² of the product with x: dim times the work. The run
// time, which also holds a few microseconds of fixed cost, grows less: 12x
// at dim 160 on a 2-core AMD EPYC VM, a step no machine's noise hides.
func FoldedWeight(dim int) Model {
	if dim < 1 {
		return invalidModel("FoldedWeight(dim=%d): dim must be at least 1", dim)
	}
	b := newBuilder("folded_weight", seedFoldedWeight)
	d := int64(dim)
	x := b.input("x", Float, FixedDims(1, d)...)
	a := b.weight("A", matmulScale(dim), d, d)
	bw := b.weight("B", matmulScale(dim), d, d)
	w := b.node("MatMul", "weight", in(a, bw))
	b.nodeTo("MatMul", "matmul", "y", in(x, w))
	b.output("y", Float, FixedDims(1, d)...)
	return b.model(fmt.Sprintf("x times a [%d,%d] weight made of two constant factors", dim, dim))
}

// Loop returns a model whose only work runs in a Loop subgraph: input "x"
// float [size], then a Loop node "loop" running its body trips times (the
// trip count is initializer "trips"; no condition input), the body
// multiplying the carried value by initializer "half" ("body_mul") and
// applying Relu ("body_relu"), then output "y" float [size]. ONNX Runtime's
// profiler writes each body run as a nested SequentialExecutor::Execute
// inside the Loop node's interval, as it does for If and Scan.
func Loop(trips int, size int64) Model {
	if trips < 1 || size < 1 {
		return invalidModel("Loop(trips=%d, size=%d): trips and size must be at least 1", trips, size)
	}
	half := make([]float32, size)
	for i := range half {
		half[i] = 0.5
	}
	body := Graph{
		Name: "loop_body",
		Inputs: []ValueInfo{
			{Name: "iter", Type: Int64},
			{Name: "cond_in", Type: Bool},
			{Name: "carried_in", Type: Float, Dims: FixedDims(size)},
		},
		Outputs: []ValueInfo{
			{Name: "cond_out", Type: Bool},
			{Name: "carried_out", Type: Float, Dims: FixedDims(size)},
		},
		Nodes: []Node{
			{Name: "body_cond", OpType: "Identity", Inputs: []string{"cond_in"}, Outputs: []string{"cond_out"}},
			{Name: "body_mul", OpType: "Mul", Inputs: []string{"carried_in", "half"}, Outputs: []string{"scaled"}},
			{Name: "body_relu", OpType: "Relu", Inputs: []string{"scaled"}, Outputs: []string{"carried_out"}},
		},
	}
	return Model{
		Producer: "ortel onnxgen",
		Doc:      fmt.Sprintf("a Loop of %d trips over float[%d]", trips, size),
		Graph: Graph{
			Name:    "loop",
			Inputs:  []ValueInfo{{Name: "x", Type: Float, Dims: FixedDims(size)}},
			Outputs: []ValueInfo{{Name: "y", Type: Float, Dims: FixedDims(size)}},
			Initializers: []Tensor{
				Int64Tensor("trips", nil, []int64{int64(trips)}),
				FloatTensor("half", []int64{size}, half),
			},
			Nodes: []Node{
				{Name: "loop", OpType: "Loop", Inputs: []string{"trips", "", "x"}, Outputs: []string{"y"},
					Attrs: []Attr{AttrGraph("body", body)}},
			},
		},
	}
}
