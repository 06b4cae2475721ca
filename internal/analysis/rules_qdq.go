package analysis

import (
	"fmt"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// Thresholds of the qdq-pairs rule (docs/report-schema.md).
const (
	// QDQShare: QuantizeLinear → DequantizeLinear pairs left in the run
	// taking this share of operator time fire the rule; QDQHighShare
	// makes it high.
	QDQShare     = 0.05
	QDQHighShare = 0.20
	// qdqLookahead is how many nodes after a QuantizeLinear its
	// DequantizeLinear may come in the run's order.
	qdqLookahead = 4
)

// qdqPair is a QuantizeLinear whose output a DequantizeLinear reads
// right back, and the node after the DequantizeLinear (the float
// operator the pair was meant to quantize; empty at the graph's end).
type qdqPair struct {
	q, dq report.NodeTiming
	next  string
}

// qdqPairs finds the QuantizeLinear → DequantizeLinear pairs the run
// executed: ONNX Runtime fuses a DequantizeLinear → op → QuantizeLinear
// group into an integer kernel (QLinearConv, QLinearMatMul, ...) when the
// op has one; a pair still in the profile was not fused, so the tensor
// is rounded to 8 bits and back in float, for nothing but that rounding.
// The profile has no edges: the DequantizeLinear is the first of the
// next few nodes reading a tensor of the QuantizeLinear's output shape
// and no stored weight.
func qdqPairs(tl []report.NodeTiming) []qdqPair {
	var out []qdqPair
	for i, q := range tl {
		if q.OpType != "QuantizeLinear" || len(q.OutputShapes) == 0 {
			continue
		}
		for j := i + 1; j < len(tl) && j <= i+qdqLookahead; j++ {
			dq := tl[j]
			if dq.OpType == "DequantizeLinear" && !storedInput(dq) && len(dq.InputShapes) > 0 && dq.InputShapes[0] == q.OutputShapes[0] {
				p := qdqPair{q: q, dq: dq}
				if j+1 < len(tl) {
					p.next = tl[j+1].OpType
				}
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// ruleQDQ fires when unfused QuantizeLinear → DequantizeLinear pairs
// take a share of operator time: a QDQ model whose quantized operators
// ONNX Runtime could not turn into integer kernels.
func ruleQDQ(f *Facts) *report.Finding {
	pairs := qdqPairs(f.Timeline)
	if len(pairs) == 0 {
		return nil
	}
	b := newShareBasis(f)
	var share float64
	around := map[string]int{}
	for _, p := range pairs {
		share += b.node(p.q) + b.node(p.dq)
		if p.next != "" {
			around[p.next]++
		}
	}
	if share < QDQShare {
		return nil
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Title: fmt.Sprintf("%s left unfused take %s of operator time", report.Plural(len(pairs), "QuantizeLinear → DequantizeLinear pair"), units.Percent(share, 1)),
		Evidence: []report.Evidence{ev("qdq_pairs", float64(len(pairs)), "{pair}"), ev("qdq_share", share, "1"),
			evText("first_pair", pairs[0].q.Name+" → "+pairs[0].dq.Name)},
	}
	if share >= QDQHighShare {
		fd.Severity = SeverityHigh
	}
	fd.Detail = fmt.Sprintf("ONNX Runtime turns a DequantizeLinear → operator → QuantizeLinear group into one integer kernel when the operator has one; these pairs ran as they are, so each rounds a tensor to 8 bits and straight back to float (first: %s → %s).", pairs[0].q.Name, pairs[0].dq.Name)
	if len(around) > 0 {
		fd.Detail += " The float operators after them: " + countList(around, 5) + "."
		fd.Evidence = append(fd.Evidence, evText("after", countList(around, 0)))
	}
	fd.Recommendation = "Quantize only the operators with integer kernels (the quantizer's op_types_to_quantize: Conv, MatMul, Gemm, ...), so no pair wraps a float operator; or let ONNX Runtime drop the leftover pairs (session option " + qdqCleanupKey + "=1, which removes their rounding too: check the outputs)."
	return fd
}

// qdqCleanupKey is ONNX Runtime's session option that removes Q/DQ
// pairs left after fusion (since 1.11; off by default).
const qdqCleanupKey = "session.enable_quant_qdq_cleanup"

// storedInput reports whether a node's first input is a stored tensor (an
// initializer): its parameter bytes cover that input at 4 bits or more an
// element. A DequantizeLinear of an activation has parameter bytes too,
// its scale and zero point, but only a few.
func storedInput(n report.NodeTiming) bool {
	if len(n.InputShapes) == 0 || n.ParameterSize == 0 {
		return false
	}
	s, err := ParseShape(n.InputShapes[0])
	return err == nil && float64(n.ParameterSize)*2 >= s.Numel()
}
