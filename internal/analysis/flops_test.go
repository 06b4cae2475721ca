package analysis

import (
	"math"
	"strings"
	"testing"
)

func TestOperatorFLOPs(t *testing.T) {
	tests := []struct {
		name    string
		op      string
		in, out []string
		want    float64 // -1: unknown
		class   string
	}{
		// 2·M·N·K: [1,40,120]·[120,360] = 2·40·360·120.
		{"MatMul prepacked B", "MatMul", []string{"float[1,40,120]"}, []string{"float[1,40,360]"}, 2 * 40 * 360 * 120, ClassMatMul},
		{"MatMul both inputs", "MatMul", []string{"float[512,256]", "float[256,128]"}, []string{"float[512,128]"}, 2 * 512 * 128 * 256, ClassMatMul},
		{"MatMul vector", "MatMul", []string{"float[64]", "float[64,32]"}, []string{"float[32]"}, 2 * 32 * 64, ClassMatMul},
		// FusedMatMul with transA: A [1,120,40] is Aᵀ of [1,40,120], so K = 120.
		{"FusedMatMul transA", "FusedMatMul", []string{"float[1,120,40]"}, []string{"float[1,40,6625]"}, 2 * 40 * 6625 * 120, ClassMatMul},
		{"FusedMatMul plain", "FusedMatMul", []string{"float[2,8,64]", "float[2,64,8]"}, []string{"float[2,8,8]"}, 2 * 2 * 8 * 8 * 64, ClassMatMul},
		{"FusedMatMul undetermined", "FusedMatMul", []string{"float[3,5]"}, []string{"float[7,9]"}, -1, ClassMatMul},
		// Gemm [1,2400]x[2400,32]: 2·1·32·2400; FusedGemm adds the activation.
		{"Gemm", "Gemm", []string{"float[1,2400]", "float[32]"}, []string{"float[1,32]"}, 2 * 32 * 2400, ClassMatMul},
		{"Gemm transA", "Gemm", []string{"float[2400,4]"}, []string{"float[4,32]"}, 2 * 4 * 32 * 2400, ClassMatMul},
		{"FusedGemm", "FusedGemm", []string{"float[1,32]", "float[1]"}, []string{"float[1,1]"}, 2*1*1*32 + 1, ClassMatMul},
		// Conv: 2·numel(Y)·C_in/g·kh·kw + numel(Y) for the bias.
		// [1,3,640,640] * [16,3,3,3] -> [1,16,320,320]: 2·1638400·27 + 1638400.
		{"Conv with bias (NCHWc)", "Conv", []string{"float[1,3,640,640]", "float[16,3,3,3]", "float[16]"}, []string{"float[1,16,320,320]"}, 2*1638400*27 + 1638400, ClassConv},
		// Depthwise: weight [16,1,3,3].
		{"depthwise Conv", "Conv", []string{"float[1,16,320,320]", "float[16,1,3,3]", "float[16]"}, []string{"float[1,16,320,320]"}, 2*1638400*9 + 1638400, ClassConv},
		{"Conv no bias", "Conv", []string{"float[1,368,20,20]", "float[96,368,1,1]"}, []string{"float[1,96,20,20]"}, 2 * 96 * 400 * 368, ClassConv},
		{"Conv 1-D", "Conv", []string{"float[1,1,576]", "float[258,1,256]"}, []string{"float[1,258,3]"}, 2 * 258 * 3 * 256, ClassConv},
		{"FusedConv", "FusedConv", []string{"float[1,129,3]", "float[128,129,3]", "float[128]"}, []string{"float[1,128,3]"}, 2*384*129*3 + 384 + 384, ClassConv},
		{"Conv weight prepacked", "Conv", []string{"float[1,16,32,32]"}, []string{"float[1,16,32,32]"}, -1, ClassConv},
		{"QLinearConv", "QLinearConv", []string{"uint8[1,8,10,10]", "float[]", "uint8[]", "int8[4,8,3,3]", "float[4]", "int8[4]", "float[]", "uint8[]"}, []string{"uint8[1,4,8,8]"}, 2 * 256 * 72, ClassConv},
		// ConvTranspose: 2·numel(X)·C_out/g·kh·kw; X [1,24,160,160], W [24,24,2,2].
		{"ConvTranspose", "ConvTranspose", []string{"float[1,24,160,160]", "float[24,24,2,2]"}, []string{"float[1,24,320,320]"}, 2 * 614400 * 96, ClassConvTranspose},
		{"ConvTranspose prepacked", "ConvTranspose", []string{"float[1,24,160,160]"}, []string{"float[1,24,320,320]"}, -1, ClassConvTranspose},
		// com.microsoft Attention: B=2, S=16, H_in=64, weights [64,192], output [2,16,64]:
		// 2·2·16·64·192 + 2·2·16·16·64 + 2·2·16·16·64.
		{"Attention", "Attention", []string{"float[2,16,64]", "float[64,192]", "float[192]"}, []string{"float[2,16,64]"}, 2*2*16*64*192 + 2*2*16*16*64*2, ClassAttention},
		// MultiHeadAttention: Q [1,10,64], K [1,30,64], V [1,30,64] -> [1,10,64]: 2·10·30·64·2.
		{"MultiHeadAttention cross", "MultiHeadAttention", []string{"float[1,10,64]", "float[1,30,64]", "float[1,30,64]"}, []string{"float[1,10,64]"}, 2 * 10 * 30 * 64 * 2, ClassAttention},
		{"ONNX Attention 4-D", "Attention", []string{"float[1,4,10,16]", "float[1,4,12,16]", "float[1,4,12,16]"}, []string{"float[1,4,10,16]"}, 2 * 10 * 12 * 64 * 2, ClassAttention},
		// GroupQueryAttention with a past of 5: L = 3 + 5.
		{"GroupQueryAttention past", "GroupQueryAttention", []string{"float[1,3,64]", "float[1,3,16]", "float[1,3,16]", "float[1,1,5,16]", "float[1,1,5,16]"}, []string{"float[1,3,64]"}, 4 * 3 * 8 * 64, ClassAttention},
		{"Add", "Add", []string{"float[1,16,320,320]", "float[1]"}, []string{"float[1,16,320,320]"}, 1638400, ClassElementwise},
		{"Sigmoid", "Sigmoid", []string{"float[1,1,640,640]"}, []string{"float[1,1,640,640]"}, 4 * 409600, ClassElementwise},
		{"Clip", "Clip", []string{"float[8]", "float[]", "float[]"}, []string{"float[8]"}, 16, ClassElementwise},
		{"Sum of 4", "Sum", []string{"float[10]", "float[10]", "float[10]", "float[10]"}, []string{"float[10]"}, 30, ClassElementwise},
		{"QuickGelu", "QuickGelu", []string{"float[1,60,1,40]"}, []string{"float[1,60,1,40]"}, 6 * 2400, ClassElementwise},
		{"ReduceMean", "ReduceMean", []string{"float[4,100]"}, []string{"float[4]"}, 400 + 4, ClassReduction},
		{"GlobalAveragePool", "GlobalAveragePool", []string{"float[1,192,20,20]"}, []string{"float[1,192,1,1]"}, 76800 + 192, ClassReduction},
		{"Softmax", "Softmax", []string{"float[1,8,40,40]"}, []string{"float[1,8,40,40]"}, 5 * 12800, ClassSoftmax},
		{"LayerNormalization", "LayerNormalization", []string{"float[1,40,120]", "float[120]", "float[120]"}, []string{"float[1,40,120]"}, 7 * 4800, ClassNormalization},
		{"BatchNormalization", "BatchNormalization", []string{"float[1,24,320,320]", "float[24]", "float[24]", "float[24]", "float[24]"}, []string{"float[1,24,320,320]"}, 2 * 2457600, ClassNormalization},
		{"Reshape", "Reshape", []string{"float[1,120,1,40]", "int64[3]"}, []string{"float[1,120,40]"}, 0, ClassDataMovement},
		{"ReorderInput", "ReorderInput", []string{"float[1,16,320,320]"}, []string{"float[1,16,320,320]"}, 0, ClassDataMovement},
		{"MemcpyToHost", "MemcpyToHost", []string{"float[1,10]"}, []string{"float[1,10]"}, 0, ClassDataMovement},
		{"MaxPool", "MaxPool", []string{"float[1,8,32,32]"}, []string{"float[1,8,16,16]"}, -1, ClassPooling},
		{"Resize", "Resize", []string{"float[1,96,20,20]", "float[0]", "float[4]"}, []string{"float[1,96,40,40]"}, -1, ClassUnknown},
		{"LSTM", "LSTM", []string{"float[1,1,128]"}, []string{"float[1,1,1,128]"}, -1, ClassUnknown},
		{"unknown op", "NonMaxSuppression", []string{"float[1,10,4]"}, []string{"int64[3,3]"}, -1, ClassUnknown},
		{"bad shape", "Add", []string{"float[1,a]"}, []string{"float[1,2]"}, -1, ClassUnknown},
		{"no output", "Add", []string{"float[1]"}, nil, -1, ClassUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := OperatorFLOPs(tt.op, tt.in, tt.out)
			if w.Class != tt.class {
				t.Errorf("class = %q, want %q", w.Class, tt.class)
			}
			if tt.want < 0 {
				if w.Known {
					t.Fatalf("FLOPs = %g, want unknown", w.FLOPs)
				}
				if w.Reason == "" {
					t.Error("unknown without a reason")
				}
				return
			}
			if !w.Known {
				t.Fatalf("unknown (%s), want %g", w.Reason, tt.want)
			}
			if math.Abs(w.FLOPs-tt.want) > 1e-9*tt.want {
				t.Errorf("FLOPs = %g, want %g", w.FLOPs, tt.want)
			}
		})
	}
}

func TestUnknownReasonsNameTheCause(t *testing.T) {
	w := OperatorFLOPs("ConvTranspose", []string{"float[1,24,160,160]"}, []string{"float[1,24,320,320]"})
	if !strings.Contains(w.Reason, "pre-packed") {
		t.Errorf("reason = %q", w.Reason)
	}
	w = OperatorFLOPs("AveragePool", []string{"float[1,8,4,4]"}, []string{"float[1,8,2,2]"})
	if !strings.Contains(w.Reason, "kernel size") {
		t.Errorf("reason = %q", w.Reason)
	}
}

func TestKnownOpTypesHaveFormulas(t *testing.T) {
	for _, op := range KnownOpTypes() {
		w := OperatorFLOPs(op, []string{"float[2,4,8,8]", "float[4,4,3,3]", "float[4]"}, []string{"float[2,4,8,8]"})
		if w.Class == ClassUnknown {
			t.Errorf("%s is listed as known but has no formula: %s", op, w.Reason)
		}
	}
}

func TestParseShape(t *testing.T) {
	tests := []struct {
		in    string
		typ   string
		dims  []int64
		numel float64
		err   bool
	}{
		{"float[1,3,640,640]", "float", []int64{1, 3, 640, 640}, 1228800, false},
		{"float[]", "float", nil, 1, false},
		{"int64[0]", "int64", []int64{0}, 0, false},
		{"float", "", nil, 0, true},
		{"[1,2]", "", nil, 0, true},
		{"float[1,-2]", "", nil, 0, true},
		{"float[1,x]", "", nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseShape(tt.in)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if tt.err {
				if !strings.Contains(err.Error(), tt.in) {
					t.Errorf("error %q does not name the input", err)
				}
				return
			}
			if s.Type != tt.typ || len(s.Dims) != len(tt.dims) || s.Numel() != tt.numel || s.String() != tt.in {
				t.Errorf("ParseShape = %+v (numel %g, %s)", s, s.Numel(), s)
			}
		})
	}
	s, _ := ParseShape("float[2,3,4]")
	if s.Dim(-1) != 4 || s.Dim(0) != 2 || s.Dim(5) != -1 || s.Dim(-4) != -1 || s.Rank() != 3 {
		t.Errorf("Dim/Rank wrong for %s", s)
	}
}

func BenchmarkOperatorFLOPs(b *testing.B) {
	b.ReportAllocs()
	in := []string{"float[1,96,160,160]", "float[32,96,3,3]", "float[32]"}
	out := []string{"float[1,32,160,160]"}
	for b.Loop() {
		OperatorFLOPs("Conv", in, out)
	}
}
