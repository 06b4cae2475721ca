package analysis

import (
	"fmt"
	"sort"
	"strings"
)

// Formula classes of OperatorFLOPs.
const (
	ClassMatMul        = "matmul"
	ClassConv          = "conv"
	ClassConvTranspose = "conv_transpose"
	ClassAttention     = "attention"
	ClassElementwise   = "elementwise"
	ClassReduction     = "reduction"
	ClassSoftmax       = "softmax"
	ClassNormalization = "normalization"
	ClassPooling       = "pooling"
	ClassDataMovement  = "data_movement"
	ClassUnknown       = "unknown"
)

// Work is the floating-point work of one operator run.
type Work struct {
	// FLOPs is the work; meaningful only when Known.
	FLOPs float64
	// Known is false when the recorded shapes do not determine the work.
	Known bool
	// Class names the formula used (Class... constants).
	Class string
	// Reason says why the work is unknown.
	Reason string
}

func known(class string, flops float64) Work { return Work{FLOPs: flops, Known: true, Class: class} }

func unknown(class, format string, args ...any) Work {
	return Work{Class: class, Reason: fmt.Sprintf(format, args...)}
}

// OperatorFLOPs returns the floating-point operations of one run of an
// operator, from its op type and the input and output shapes ONNX Runtime's
// profiler recorded ("float[1,3,640,640]"). A multiply-add counts as two
// FLOPs; a transcendental function (exp, erf, tanh, log, sqrt) counts as
// one. Op types it has no formula for, and shapes that do not determine the
// work (a weight ONNX Runtime pre-packed and so did not record), give an
// unknown Work with the reason: the work is never guessed.
//
// Formulas (Y is the output, numel the element count):
//
//	MatMul, FusedMatMul, MatMulInteger, QLinearMatMul, MatMulNBits:  2·numel(Y)·K
//	Gemm, QGemm: 2·M·N·K; FusedGemm adds numel(Y) for the activation
//	Conv, FusedConv, NCHWc Conv, NhwcConv, ConvInteger, QLinearConv:
//	    2·numel(Y)·(C_in/group)·prod(kernel) from the weight [C_out, C_in/group, k...];
//	    + numel(Y) with a bias, + numel(Y) for FusedConv's activation
//	ConvTranspose: 2·numel(X)·(C_out/group)·prod(kernel) from the weight [C_in, C_out/group, k...]
//	    (+ numel(Y) with a bias)
//	Attention (com.microsoft, packed weights [H_in, H_q+H_k+H_v]):
//	    2·B·S·H_in·(H_q+H_k+H_v) + 2·B·S·S·H_q + 2·B·S·S·H_v
//	MultiHeadAttention, GroupQueryAttention, Attention (ONNX, Q/K/V):
//	    2·B·S·L·D_qk + 2·B·S·L·D_v, L the key length (+ past length)
//	    (attention FLOPs leave out the softmax: its size needs the head count,
//	    which the profile does not record)
//	element-wise: c·numel(Y), c the op's arithmetic per element (Add 1,
//	    Sigmoid 4, Gelu 5, HardSwish 5, ...; see elementwiseCost)
//	reductions: c·numel(X) (+ numel(Y) for means), GlobalAveragePool numel(X)+numel(Y)
//	Softmax, LogSoftmax: 5·numel(X)  (max, subtract, exp, sum, divide)
//	LayerNormalization 7·numel(X), SkipLayerNormalization 8, SimplifiedLayerNormalization
//	    (RMS) 4, SkipSimplifiedLayerNormalization 5, BatchNormalization 2,
//	    InstanceNormalization and GroupNormalization 7
//	data movement (Reshape, Transpose, Concat, Gather, Slice, Cast, Pad, ReorderInput,
//	    ReorderOutput, Memcpy, ...): 0 FLOPs, known
//	MaxPool, AveragePool, Resize, LSTM, GRU, Einsum, control flow, ...: unknown
//	    (the kernel size, the interpolation mode or the weights are not in the profile)
func OperatorFLOPs(opType string, inputs, outputs []string) Work {
	in, err := parseShapes(inputs)
	if err != nil {
		return unknown(ClassUnknown, "%v", err)
	}
	out, err := parseShapes(outputs)
	if err != nil {
		return unknown(ClassUnknown, "%v", err)
	}
	return flops(opType, in, out)
}

func flops(op string, in, out []Shape) Work {
	if dataMovement[op] {
		return known(ClassDataMovement, 0)
	}
	if len(out) == 0 {
		return unknown(ClassUnknown, "%s: no output shape recorded", op)
	}
	y := out[0]
	if c, ok := elementwiseCost[op]; ok {
		switch op {
		case "Sum", "Max", "Min":
			// Variadic: one operation per extra input.
			c = float64(max(len(in)-1, 1))
		case "Mean":
			c = float64(max(len(in), 1))
		}
		return known(ClassElementwise, c*y.Numel())
	}
	if len(in) == 0 {
		return unknown(ClassUnknown, "%s: no input shape recorded", op)
	}
	x := in[0]
	switch op {
	case "MatMul", "MatMulInteger", "QLinearMatMul", "MatMulNBits", "DynamicQuantizeMatMul", "MatMulIntegerToFloat", "MatMulBnb4":
		return matmul(op, x, y, false)
	case "FusedMatMul", "TransposeMatMul":
		return matmul(op, x, y, true)
	case "Gemm", "FusedGemm", "QGemm":
		return gemm(op, x, y)
	case "Conv", "FusedConv", "NhwcConv", "NhwcFusedConv":
		return conv(op, in, y, 1)
	case "ConvInteger":
		return conv(op, in, y, 1)
	case "QLinearConv":
		return conv(op, in, y, 3)
	case "ConvTranspose":
		return convTranspose(in, y)
	case "Attention", "MultiHeadAttention", "GroupQueryAttention":
		return attention(op, in, y)
	case "Softmax", "LogSoftmax":
		return known(ClassSoftmax, 5*x.Numel())
	case "GlobalAveragePool":
		return known(ClassReduction, x.Numel()+y.Numel())
	case "GlobalMaxPool":
		return known(ClassReduction, x.Numel())
	case "GlobalLpPool":
		return known(ClassReduction, 2*x.Numel()+y.Numel())
	case "MaxPool", "AveragePool", "LpPool", "QLinearAveragePool", "QLinearGlobalAveragePool", "MaxRoiPool", "RoiAlign":
		return unknown(ClassPooling, "%s: the kernel size is not in the profile", op)
	}
	if c, ok := reductionCost[op]; ok {
		f := c[0]*x.Numel() + c[1]*y.Numel()
		return known(ClassReduction, f)
	}
	if c, ok := normalizationCost[op]; ok {
		return known(ClassNormalization, c*x.Numel())
	}
	switch op {
	case "Resize", "Upsample":
		return unknown(ClassUnknown, "%s: the interpolation mode is not in the profile", op)
	case "LSTM", "GRU", "RNN", "DynamicQuantizeLSTM":
		return unknown(ClassUnknown, "%s: the recurrent weights are pre-packed and not in the profile", op)
	case "If", "Loop", "Scan":
		return unknown(ClassUnknown, "%s: control flow; its subgraph's operators are profiled on their own", op)
	}
	return unknown(ClassUnknown, "no FLOP formula for op type %s", op)
}

// matmul: 2·numel(Y)·K, K the contracted dimension of A. For FusedMatMul
// (which may transpose A) K is A's dimension that is not Y's row count.
func matmul(op string, a, y Shape, mayTranspose bool) Work {
	if a.Rank() == 0 || (y.Rank() == 0 && a.Rank() != 1) {
		return unknown(ClassMatMul, "%s: input %s and output %s do not determine the inner dimension", op, a, y)
	}
	if a.Rank() == 1 {
		return known(ClassMatMul, 2*y.Numel()*float64(a.Dims[0]))
	}
	k := a.Dim(-1)
	if mayTranspose && y.Rank() >= 2 {
		m := y.Dim(-2)
		switch {
		case a.Dim(-2) == m:
			k = a.Dim(-1)
		case a.Dim(-1) == m:
			k = a.Dim(-2)
		default:
			return unknown(ClassMatMul, "%s: input %s and output %s do not determine the inner dimension", op, a, y)
		}
	}
	return known(ClassMatMul, 2*y.Numel()*float64(k))
}

// gemm: Y [M,N] = op(A)·op(B); A is [M,K] or, transposed, [K,M].
func gemm(op string, a, y Shape) Work {
	if a.Rank() != 2 || y.Rank() != 2 {
		return unknown(ClassMatMul, "%s: want 2-D A and Y, got %s and %s", op, a, y)
	}
	m := y.Dims[0]
	var k int64
	switch {
	case a.Dims[0] == m:
		k = a.Dims[1]
	case a.Dims[1] == m:
		k = a.Dims[0]
	default:
		return unknown(ClassMatMul, "%s: input %s and output %s do not determine the inner dimension", op, a, y)
	}
	f := 2 * y.Numel() * float64(k)
	if op == "FusedGemm" {
		f += y.Numel()
	}
	return known(ClassMatMul, f)
}

// conv: the weight [C_out, C_in/group, k...] is input w.
func conv(op string, in []Shape, y Shape, w int) Work {
	x := in[0]
	if len(in) <= w || in[w].Rank() != x.Rank() || x.Rank() < 3 {
		return unknown(ClassConv, "%s: the weight shape is not in the profile (ONNX Runtime pre-packed it)", op)
	}
	wt := in[w]
	perOut := float64(wt.Dims[1])
	for _, k := range wt.Dims[2:] {
		perOut *= float64(k)
	}
	f := 2 * y.Numel() * perOut
	if b := w + 1; op != "QLinearConv" && len(in) > b && in[b].Rank() == 1 && in[b].Dims[0] == wt.Dims[0] {
		f += y.Numel() // bias
	}
	if op == "FusedConv" || op == "NhwcFusedConv" {
		f += y.Numel() // activation
	}
	return known(ClassConv, f)
}

// convTranspose: the weight [C_in, C_out/group, k...] is input 1; every
// input element meets C_out/group·prod(k) weights.
func convTranspose(in []Shape, y Shape) Work {
	x := in[0]
	if len(in) < 2 || in[1].Rank() != x.Rank() || x.Rank() < 3 {
		return unknown(ClassConvTranspose, "ConvTranspose: the weight shape is not in the profile (ONNX Runtime pre-packed it)")
	}
	wt := in[1]
	per := float64(wt.Dims[1])
	for _, k := range wt.Dims[2:] {
		per *= float64(k)
	}
	f := 2 * x.Numel() * per
	if len(in) > 2 && in[2].Rank() == 1 {
		f += y.Numel()
	}
	return known(ClassConvTranspose, f)
}

func attention(op string, in []Shape, y Shape) Work {
	q := in[0]
	// com.microsoft Attention: input [B,S,H_in], weights [H_in, H_q+H_k+H_v].
	if op == "Attention" && len(in) > 1 && in[1].Rank() == 2 && q.Rank() == 3 && in[1].Dims[0] == q.Dims[2] && y.Rank() == 3 {
		b, s, hin := float64(q.Dims[0]), float64(q.Dims[1]), float64(q.Dims[2])
		hqkv, hv := float64(in[1].Dims[1]), float64(y.Dims[2])
		hq := (hqkv - hv) / 2
		if hq <= 0 {
			return unknown(ClassAttention, "%s: weights %s and output %s do not determine the head sizes", op, in[1], y)
		}
		return known(ClassAttention, 2*b*s*hin*hqkv+2*b*s*s*hq+2*b*s*s*hv)
	}
	var b, s, d float64
	switch q.Rank() {
	case 3: // [B,S,D]
		b, s, d = float64(q.Dims[0]), float64(q.Dims[1]), float64(q.Dims[2])
	case 4: // [B,N,S,H]
		b, s, d = float64(q.Dims[0]), float64(q.Dims[2]), float64(q.Dims[1]*q.Dims[3])
	default:
		return unknown(ClassAttention, "%s: query shape %s is not [B,S,D] or [B,N,S,H]", op, q)
	}
	var dv float64
	switch y.Rank() {
	case 3:
		dv = float64(y.Dims[2])
	case 4:
		dv = float64(y.Dims[1] * y.Dims[3])
	default:
		return unknown(ClassAttention, "%s: output shape %s is not [B,S,D] or [B,N,S,H]", op, y)
	}
	l := s // packed QKV, or no key recorded: self-attention
	if len(in) > 1 {
		k := in[1]
		switch {
		case k.Rank() == 3 && k.Dims[0] == q.Dims[0]:
			l = float64(k.Dims[1])
		case k.Rank() == 4 && k.Dims[0] == q.Dims[0]:
			l = float64(k.Dims[2])
		}
	}
	if op == "GroupQueryAttention" && len(in) > 3 && in[3].Rank() == 4 && in[3].Dims[0] == q.Dims[0] {
		l += float64(in[3].Dims[2]) // past key [B,N_kv,P,H]
	}
	if op == "GroupQueryAttention" {
		// Each query head attends with its own head size; the output has D_q.
		d = dv
	}
	return known(ClassAttention, 2*b*s*l*d+2*b*s*l*dv)
}

// elementwiseCost is the arithmetic per output element of element-wise ops.
// Transcendentals count one.
var elementwiseCost = map[string]float64{
	"Add": 1, "Sub": 1, "Mul": 1, "Div": 1, "Pow": 1, "Mod": 1,
	"Max": 1, "Min": 1, "Sum": 1, "Mean": 1,
	"Relu": 1, "Abs": 1, "Neg": 1, "Sign": 1, "Clip": 2, "Reciprocal": 1,
	"Floor": 1, "Ceil": 1, "Round": 1, "Sqrt": 1, "Exp": 1, "Log": 1,
	"Tanh": 1, "Erf": 1, "Sin": 1, "Cos": 1, "Tan": 1, "Asin": 1, "Acos": 1, "Atan": 1,
	"Sinh": 1, "Cosh": 1, "Asinh": 1, "Acosh": 1, "Atanh": 1,
	"Equal": 1, "Less": 1, "Greater": 1, "LessOrEqual": 1, "GreaterOrEqual": 1,
	"Not": 1, "And": 1, "Or": 1, "Xor": 1, "Where": 1, "IsNaN": 1, "IsInf": 1,
	"BitwiseAnd": 1, "BitwiseOr": 1, "BitwiseXor": 1, "BitwiseNot": 1, "BitShift": 1,
	"ThresholdedRelu":  1,
	"DequantizeLinear": 2, "QuantizeLinear": 3,
	"LeakyRelu": 2, "PRelu": 2, "Shrink": 2, "Affine": 2, "BiasAdd": 2,
	"Elu": 3, "Softplus": 3, "Softsign": 3, "ScaledTanh": 3,
	"Sigmoid": 4, "HardSigmoid": 4, "Selu": 4, "Celu": 4,
	"HardSwish": 5, "Mish": 5, "Gelu": 5,
	"QuickGelu": 6, "BiasGelu": 6,
	"FastGelu": 8,
}

// reductionCost is {per input element, per output element}.
var reductionCost = map[string][2]float64{
	"ReduceSum": {1, 0}, "ReduceMax": {1, 0}, "ReduceMin": {1, 0}, "ReduceProd": {1, 0},
	"ReduceMean": {1, 1}, "ReduceL1": {2, 0}, "ReduceL2": {2, 1}, "ReduceSumSquare": {2, 0},
	"ReduceLogSum": {1, 1}, "ReduceLogSumExp": {2, 1}, "ArgMax": {1, 0}, "ArgMin": {1, 0},
}

// normalizationCost is the arithmetic per input element.
var normalizationCost = map[string]float64{
	// mean (1), subtract (1), square (1), variance sum (1), scale by 1/σ (1), γ (1), β (1)
	"LayerNormalization": 7, "InstanceNormalization": 7, "GroupNormalization": 7,
	"SkipLayerNormalization": 8, "MeanVarianceNormalization": 5,
	// square (1), sum (1), scale by 1/rms (1), γ (1)
	"SimplifiedLayerNormalization": 4, "RMSNormalization": 4, "SkipSimplifiedLayerNormalization": 5,
	// folded scale and shift at inference
	"BatchNormalization": 2,
	"LpNormalization":    3,
}

// dataMovement are op types that move or reinterpret data without
// arithmetic: 0 FLOPs, and memory-bound by definition.
var dataMovement = setOf(
	"Reshape", "Transpose", "Concat", "Slice", "Gather", "GatherElements", "GatherND",
	"Split", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Shape", "Size", "Cast", "CastLike",
	"Expand", "Tile", "Pad", "ReorderInput", "ReorderOutput", "MemcpyToHost", "MemcpyFromHost",
	"Constant", "ConstantOfShape", "DepthToSpace", "SpaceToDepth", "ScatterND", "ScatterElements",
	"Compress", "NonZero", "Dropout", "Trilu", "Range", "OneHot", "EyeLike",
)

// IsDataMovement reports whether an op type only moves data (0 FLOPs).
func IsDataMovement(op string) bool { return dataMovement[op] }

// IsElementwise reports whether an op type is element-wise arithmetic, the
// kind that fuses well into a neighbouring operator.
func IsElementwise(op string) bool {
	_, ok := elementwiseCost[op]
	return ok
}

// IsMemcpy reports whether an op type copies tensors between providers.
func IsMemcpy(op string) bool { return strings.HasPrefix(op, "Memcpy") }

// KnownOpTypes returns the op types OperatorFLOPs has a formula for
// (including pure data movement), sorted.
func KnownOpTypes() []string {
	var out []string
	for k := range elementwiseCost {
		out = append(out, k)
	}
	for k := range reductionCost {
		out = append(out, k)
	}
	for k := range normalizationCost {
		out = append(out, k)
	}
	for k := range dataMovement {
		out = append(out, k)
	}
	out = append(out, "MatMul", "MatMulInteger", "QLinearMatMul", "MatMulNBits", "DynamicQuantizeMatMul",
		"MatMulIntegerToFloat", "MatMulBnb4", "FusedMatMul", "TransposeMatMul", "Gemm", "FusedGemm", "QGemm",
		"Conv", "FusedConv", "NhwcConv", "NhwcFusedConv", "ConvInteger", "QLinearConv", "ConvTranspose",
		"Attention", "MultiHeadAttention", "GroupQueryAttention", "Softmax", "LogSoftmax",
		"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
	sort.Strings(out)
	return out
}

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}
