package analysis

import (
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestAttentionOnRealMoonshineDecoder: the real quantized Moonshine
// decoder (one decode step with 12 cached positions) runs each of its 12
// attention blocks as about 44 nodes; the finding counts them without the
// q/k/v/dense projections, with the 12 Concat nodes that append to its
// key/value cache, and its check fuses with the heads read from the
// profile.
func TestAttentionOnRealMoonshineDecoder(t *testing.T) {
	_, fds := fixtureFindings(t, "testdata/moonshine_decoder_report.json.gz")
	fd := findingOf(fds, "unfused-attention")
	if fd == nil {
		t.Fatal("no unfused-attention finding on the Moonshine decoder")
	}
	for _, want := range []string{"12 attention blocks run as 536 nodes taking 37.9% of operator time", "Transpose 10.2%", "24 past_key_values inputs", "12 Concat nodes per step", "8 heads of 36, hidden size 288"} {
		if !strings.Contains(fd.Title+fd.Detail+fd.Recommendation, want) {
			t.Errorf("finding lacks %q:\n%s\n%s\n%s", want, fd.Title, fd.Detail, fd.Recommendation)
		}
	}
	if want := "python -m onnxruntime.transformers.optimizer --input /work/main/.cache/ortel/models/moonshine-tiny-decoder_model_merged.onnx --output NEW.onnx --model_type bart --num_heads 8 --hidden_size 288 && ortel bench moonshine-tiny --out out/before"; !strings.HasPrefix(fd.Check, want) {
		t.Errorf("check %q, want it to start %q", fd.Check, want)
	}
	for _, p := range []string{"testdata/vad_report.json.gz", "testdata/det_report_epyc.json.gz"} {
		if _, other := fixtureFindings(t, p); findingOf(other, "unfused-attention") != nil {
			t.Errorf("fired on %s, which has no attention", p)
		}
	}
}

// TestDequantizedMatMulWeightOnRealMoonshineDecoder: the decoder's tied
// output projection reads its 288×32768 weight through a DequantizeLinear
// of the uint8 embedding every step; the finding names the pair and its
// share and recommends a kernel that reads quantized weights.
func TestDequantizedMatMulWeightOnRealMoonshineDecoder(t *testing.T) {
	_, fds := fixtureFindings(t, "testdata/moonshine_decoder_report.json.gz")
	fd := findingOf(fds, "dequantize-weights")
	if fd == nil {
		t.Fatal("no dequantize-weights finding")
	}
	for _, want := range []string{"Node model.decoder.embed_tokens.weight_transposed_DequantizeLinear expands uint8[288,32768] into the float weight of /proj_out/MatMul (MatMul) every run: the pair takes 23.7% of operator time", "MatMulNBits"} {
		if !strings.Contains(fd.Detail+fd.Recommendation, want) {
			t.Errorf("finding lacks %q:\n%s\n%s", want, fd.Detail, fd.Recommendation)
		}
	}
}

// TestKVConcat: the cache append is a float rank-4 Concat of a past
// longer than one position and the step, along the sequence axis; rotary
// halves (last axis) and shape arithmetic are not.
func TestKVConcat(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		out  string
		want bool
	}{
		{[]string{"float[1,8,12,36]", "float[1,8,1,36]"}, "float[1,8,13,36]", true},
		{[]string{"float[1,8,1,32]", "float[1,8,1,4]"}, "float[1,8,1,36]", false},
		{[]string{"int64[1]", "int64[1]"}, "int64[2]", false},
		{[]string{"float[1,8,1,36]", "float[1,8,1,36]"}, "float[1,8,2,36]", false},
	} {
		n := report.NodeTiming{OpType: "Concat", InputShapes: tt.in, OutputShapes: []string{tt.out}}
		if got := kvConcat(n); got != tt.want {
			t.Errorf("kvConcat(%v -> %s) = %v, want %v", tt.in, tt.out, got, tt.want)
		}
	}
}
