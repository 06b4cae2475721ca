package analysis

import (
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
)

// qdqModel is x → QuantizeLinear → DequantizeLinear → Exp → y over n
// floats: a pair around an operator without an integer kernel, which
// ONNX Runtime cannot fuse.
func qdqModel(n int64) onnxgen.Model {
	return onnxgen.Model{Graph: onnxgen.Graph{
		Name:         "qdq",
		Inputs:       []onnxgen.ValueInfo{{Name: "x", Type: onnxgen.Float, Dims: onnxgen.FixedDims(1, n)}},
		Outputs:      []onnxgen.ValueInfo{{Name: "y", Type: onnxgen.Float, Dims: onnxgen.FixedDims(1, n)}},
		Initializers: []onnxgen.Tensor{onnxgen.FloatTensor("scale", nil, []float32{0.05})},
		Nodes: []onnxgen.Node{
			{Name: "x_quantize", OpType: "QuantizeLinear", Inputs: []string{"x", "scale"}, Outputs: []string{"xq"}},
			{Name: "x_dequantize", OpType: "DequantizeLinear", Inputs: []string{"xq", "scale"}, Outputs: []string{"xd"}},
			{Name: "exp", OpType: "Exp", Inputs: []string{"xd"}, Outputs: []string{"y"}},
		},
	}}
}

// TestQDQPairsOnRealORT: none of the project's real models has a
// QuantizeLinear → DequantizeLinear pair at run time, so the rule is
// tested on a small generated model run by real ONNX Runtime (default
// optimization level): the pair around Exp stays in the profile, and the
// finding names it, the Exp after it, and the session option that
// removes such pairs as its check.
func TestQDQPairsOnRealORT(t *testing.T) {
	rep := profiledReport(t, qdqModel(1<<16), nil)
	f := FactsFrom(rep, Roofline(rep.Operators, fixedPeaks), fixedPeaks)
	if p := qdqPairs(f.Timeline); len(p) != 1 {
		t.Fatalf("%d pairs in the profile, want 1: %+v", len(p), f.Timeline)
	}
	fds := Findings(f)
	setChecks(fds, rep)
	fd := findingOf(fds, "qdq-pairs")
	if fd == nil {
		t.Fatalf("no qdq-pairs finding; timeline %+v", f.Timeline)
	}
	for _, want := range []string{"1 QuantizeLinear → DequantizeLinear pair left unfused", "x_quantize → x_dequantize", "1 Exp"} {
		if !strings.Contains(fd.Title+fd.Detail, want) {
			t.Errorf("finding lacks %q:\n%s\n%s", want, fd.Title, fd.Detail)
		}
	}
	if !strings.HasSuffix(fd.Check, "--session-config session.enable_quant_qdq_cleanup=1") {
		t.Errorf("check %q", fd.Check)
	}
}

// TestQDQPairs: a DequantizeLinear of a stored weight, or one reading
// another shape, is not the QuantizeLinear's pair.
func TestQDQPairs(t *testing.T) {
	q := report.NodeTiming{Name: "q", OpType: "QuantizeLinear", OutputShapes: []string{"uint8[1,64]"}}
	dq := report.NodeTiming{Name: "dq", OpType: "DequantizeLinear", InputShapes: []string{"uint8[1,64]", "float[]"}}
	w := report.NodeTiming{Name: "w", OpType: "DequantizeLinear", InputShapes: []string{"uint8[1,64]", "float[]"}, ParameterSize: 64}
	other := report.NodeTiming{Name: "o", OpType: "DequantizeLinear", InputShapes: []string{"uint8[64,64]", "float[]"}}
	if p := qdqPairs([]report.NodeTiming{q, w, other, dq, {OpType: "Exp"}}); len(p) != 1 || p[0].dq.Name != "dq" || p[0].next != "Exp" {
		t.Errorf("pairs %+v", p)
	}
	if p := qdqPairs([]report.NodeTiming{q, w, other}); len(p) != 0 {
		t.Errorf("pairs %+v, want none", p)
	}
}
