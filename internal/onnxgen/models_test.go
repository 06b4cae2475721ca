package onnxgen

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/test/testenv"
)

func TestReadyMadeModelsLoadInORT(t *testing.T) {
	testenv.RequireORT(t)
	f, i64 := ortFloat(), ortInt64()
	dec := DecoderConfig{Layers: 1, Heads: 2, HeadDim: 4, Vocab: 10}
	tests := []struct {
		name      string
		model     Model
		nodes     int
		in, out   []ioSpec
		paramsMin int64
	}{
		{"MatMulAddChain", MatMulAddChain(3, 8), 6,
			[]ioSpec{{"x", f, []int64{1, 8}}}, []ioSpec{{"y", f, []int64{1, 8}}}, 3 * (64 + 8)},
		{"DynamicBatch", DynamicBatch(8, 2), 6,
			[]ioSpec{{"x", f, []int64{-1, 8}}}, []ioSpec{{"y", f, []int64{-1, 8}}}, 2 * (64 + 8)},
		{"ElementwiseChain", ElementwiseChain(4, 100), 8,
			[]ioSpec{{"x", f, []int64{100}}}, []ioSpec{{"y", f, []int64{100}}}, 8},
		{"LargeMatMul", LargeMatMul(3, 5, 7), 1,
			[]ioSpec{{"a", f, []int64{3, 5}}, {"b", f, []int64{5, 7}}}, []ioSpec{{"c", f, []int64{3, 7}}}, 0},
		{"Bandwidth", Bandwidth(64), 1,
			[]ioSpec{{"a", f, []int64{64}}, {"b", f, []int64{64}}}, []ioSpec{{"c", f, []int64{64}}}, 0},
		{"FoldedWeight", FoldedWeight(8), 2,
			[]ioSpec{{"x", f, []int64{1, 8}}}, []ioSpec{{"y", f, []int64{1, 8}}}, 2 * 64},
		{"Conv", Conv(2, 3, 3), 2,
			[]ioSpec{{"x", f, []int64{-1, 2, -1, -1}}}, []ioSpec{{"y", f, []int64{-1, 3, -1, -1}}}, 3*2*9 + 3},
		{"Decoder", Decoder(dec), 0,
			[]ioSpec{{"input_ids", i64, []int64{-1, -1}}, {"attention_mask", i64, []int64{-1, -1}},
				{"past_key_values.0.key", f, []int64{-1, 2, -1, 4}}, {"past_key_values.0.value", f, []int64{-1, 2, -1, 4}}},
			[]ioSpec{{"logits", f, []int64{-1, -1, 10}},
				{"present.0.key", f, []int64{-1, 2, -1, 4}}, {"present.0.value", f, []int64{-1, 2, -1, 4}}}, 10 * 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.nodes > 0 && len(tt.model.Graph.Nodes) != tt.nodes {
				t.Errorf("%d nodes, want %d", len(tt.model.Graph.Nodes), tt.nodes)
			}
			if got := tt.model.NumParameters(); got < tt.paramsMin {
				t.Errorf("NumParameters = %d, want at least %d", got, tt.paramsMin)
			}
			checkIO(t, writeModel(t, tt.model, tt.name+".onnx"), tt.in, tt.out)
		})
	}
}

func TestMatMulAddChainMatchesGo(t *testing.T) {
	const n, dim = 3, 16
	m := MatMulAddChain(n, dim)
	for i := range n {
		for _, name := range []string{"matmul_" + itoa(i), "add_" + itoa(i)} {
			if m.Graph.Node(name) == nil {
				t.Errorf("no node %q", name)
			}
		}
	}
	s := newSession(t, writeModel(t, m, "chain.onnx"), []string{"x"}, []string{"y"})
	x := sample(dim, 42)
	got, shape := floatsOf(t, run(t, s, []ort.Value{tensor(t, x, 1, dim)}, 1)[0])
	if want := []int64{1, dim}; !equalDims(shape, want) {
		t.Fatalf("y shape %v, want %v", shape, want)
	}

	want := x
	for i := range n {
		want = matmul(want, m.Graph.Initializer("W_"+itoa(i)).Floats, 1, dim, dim)
		for j, b := range m.Graph.Initializer("b_" + itoa(i)).Floats {
			want[j] += b
		}
	}
	assertClose(t, "y", got, want, 1e-4)
}

func TestDynamicBatchRowsAreIndependent(t *testing.T) {
	const dim, layers = 8, 3
	m := DynamicBatch(dim, layers)
	s := newSession(t, writeModel(t, m, "dyn.onnx"), []string{"x"}, []string{"y"})

	reference := func(row []float32) []float32 {
		h := row
		for i := range layers {
			h = matmul(h, m.Graph.Initializer("W_"+itoa(i)).Floats, 1, dim, dim)
			for j, b := range m.Graph.Initializer("b_" + itoa(i)).Floats {
				h[j] = max(h[j]+b, 0)
			}
		}
		return h
	}

	x4 := sample(4*dim, 7)
	y4, shape4 := floatsOf(t, run(t, s, []ort.Value{tensor(t, x4, 4, dim)}, 1)[0])
	if !equalDims(shape4, []int64{4, dim}) {
		t.Fatalf("batch 4: y shape %v, want [4 %d]", shape4, dim)
	}
	nonzero := 0
	for r := range 4 {
		row := x4[r*dim : (r+1)*dim]
		want := reference(row)
		assertClose(t, "batch 4 row "+itoa(r)+" vs Go", y4[r*dim:(r+1)*dim], want, 1e-4)
		y1, shape1 := floatsOf(t, run(t, s, []ort.Value{tensor(t, row, 1, dim)}, 1)[0])
		if !equalDims(shape1, []int64{1, dim}) {
			t.Fatalf("batch 1: y shape %v, want [1 %d]", shape1, dim)
		}
		assertClose(t, "row "+itoa(r)+" alone vs in batch 4", y1, y4[r*dim:(r+1)*dim], 1e-5)
		for _, v := range want {
			if v != 0 {
				nonzero++
			}
		}
	}
	if nonzero == 0 {
		t.Fatal("every output is 0 after Relu; the test would not notice wrong weights")
	}
}

func TestElementwiseChainMatchesGo(t *testing.T) {
	const n, size = 4, 1000
	m := ElementwiseChain(n, size)
	s := newSession(t, writeModel(t, m, "ew.onnx"), []string{"x"}, []string{"y"})
	x := sample(size, 3)
	got, _ := floatsOf(t, run(t, s, []ort.Value{tensor(t, x, size)}, 1)[0])
	var add, mul []float32
	for i := range n {
		add = append(add, m.Graph.Initializer("c_" + itoa(i)).Floats[0])
		mul = append(mul, m.Graph.Initializer("m_" + itoa(i)).Floats[0])
	}
	want := make([]float32, size)
	for j := range want {
		v := x[j]
		for i := range n {
			v = (v + add[i]) * mul[i]
		}
		want[j] = v
	}
	assertClose(t, "y", got, want, 1e-5)
}

func TestLargeMatMulMatchesGo(t *testing.T) {
	const m, k, n = 3, 5, 4
	s := newSession(t, writeModel(t, LargeMatMul(m, k, n), "mm.onnx"), []string{"a", "b"}, []string{"c"})
	a, b := sample(m*k, 1), sample(k*n, 2)
	got, shape := floatsOf(t, run(t, s, []ort.Value{tensor(t, a, m, k), tensor(t, b, k, n)}, 1)[0])
	if !equalDims(shape, []int64{m, n}) {
		t.Fatalf("c shape %v, want [%d %d]", shape, m, n)
	}
	assertClose(t, "c", got, matmul(a, b, m, k, n), 1e-5)
	if got := MatMulFLOPs(m, k, n); got != 2*m*k*n {
		t.Errorf("MatMulFLOPs = %d, want %d", got, 2*m*k*n)
	}
}

func TestFoldedWeightMatchesGo(t *testing.T) {
	const dim = 16
	m := FoldedWeight(dim)
	s := newSession(t, writeModel(t, m, "folded.onnx"), []string{"x"}, []string{"y"})
	x := sample(dim, 7)
	got, shape := floatsOf(t, run(t, s, []ort.Value{tensor(t, x, 1, dim)}, 1)[0])
	if want := []int64{1, dim}; !equalDims(shape, want) {
		t.Fatalf("y shape %v, want %v", shape, want)
	}
	w := matmul(m.Graph.Initializer("A").Floats, m.Graph.Initializer("B").Floats, dim, dim, dim)
	assertClose(t, "y", got, matmul(x, w, 1, dim, dim), 1e-4)
}

func TestBandwidthMatchesGo(t *testing.T) {
	const size = 1024
	s := newSession(t, writeModel(t, Bandwidth(size), "bw.onnx"), []string{"a", "b"}, []string{"c"})
	a, b := sample(size, 1), sample(size, 2)
	got, _ := floatsOf(t, run(t, s, []ort.Value{tensor(t, a, size), tensor(t, b, size)}, 1)[0])
	want := make([]float32, size)
	for i := range want {
		want[i] = a[i] + b[i]
	}
	assertClose(t, "c", got, want, 0)
	if got := BandwidthBytes(size); got != 12*size {
		t.Errorf("BandwidthBytes = %d, want %d", got, 12*size)
	}
}

func TestConvMatchesGo(t *testing.T) {
	const ci, co, k, h, w = 2, 3, 3, 5, 6
	m := Conv(ci, co, k)
	s := newSession(t, writeModel(t, m, "conv.onnx"), []string{"x"}, []string{"y"})
	x := sample(ci*h*w, 9)
	got, shape := floatsOf(t, run(t, s, []ort.Value{tensor(t, x, 1, ci, h, w)}, 1)[0])
	if !equalDims(shape, []int64{1, co, h, w}) {
		t.Fatalf("y shape %v, want [1 %d %d %d]", shape, co, h, w)
	}
	W, B := m.Graph.Initializer("W").Floats, m.Graph.Initializer("B").Floats
	want := make([]float32, co*h*w)
	for o := range co {
		for y := range h {
			for xx := range w {
				s := float64(B[o])
				for c := range ci {
					for dy := range k {
						for dx := range k {
							iy, ix := y+dy-k/2, xx+dx-k/2
							if iy < 0 || iy >= h || ix < 0 || ix >= w {
								continue
							}
							s += float64(W[((o*ci+c)*k+dy)*k+dx]) * float64(x[(c*h+iy)*w+ix])
						}
					}
				}
				want[(o*h+y)*w+xx] = float32(max(s, 0))
			}
		}
	}
	assertClose(t, "y", got, want, 1e-5)
}

func TestReadyMadeModelsRejectBadArguments(t *testing.T) {
	tests := []struct {
		name  string
		model Model
		want  string
	}{
		{"MatMulAddChain", MatMulAddChain(0, 4), "MatMulAddChain(n=0, dim=4)"},
		{"DynamicBatch", DynamicBatch(4, -1), "DynamicBatch(dim=4, layers=-1)"},
		{"ElementwiseChain", ElementwiseChain(2, 0), "ElementwiseChain(n=2, size=0)"},
		{"LargeMatMul", LargeMatMul(1, 0, 1), "LargeMatMul(m=1, k=0, n=1)"},
		{"Bandwidth", Bandwidth(-5), "Bandwidth(size=-5)"},
		{"Conv even kernel", Conv(1, 1, 2), "kernel=2"},
		{"FoldedWeight", FoldedWeight(0), "FoldedWeight(dim=0)"},
		{"Decoder", Decoder(DecoderConfig{Heads: -1}), "sizes must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.model.Marshal()
			if !errors.Is(err, ErrInvalidModel) {
				t.Fatalf("Marshal error = %v, want one wrapping ErrInvalidModel", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}

func TestReadyMadeModelsAreDeterministic(t *testing.T) {
	for _, build := range []func() Model{
		func() Model { return MatMulAddChain(2, 4) },
		func() Model { return DynamicBatch(4, 2) },
		func() Model { return ElementwiseChain(2, 8) },
		func() Model { return Conv(1, 2, 3) },
		func() Model { return FoldedWeight(4) },
		func() Model { return Decoder(DecoderConfig{Layers: 1, HeadDim: 4, Vocab: 8}) },
	} {
		a, err := build().Marshal()
		if err != nil {
			t.Fatal(err)
		}
		b, err := build().Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if string(a) != string(b) {
			t.Errorf("model %q: two builds give different bytes", build().Graph.Name)
		}
	}
}

func equalDims(a, b []int64) bool { return slices.Equal(a, b) }

func itoa(i int) string { return strconv.Itoa(i) }
