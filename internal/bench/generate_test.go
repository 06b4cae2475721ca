package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/test/testenv"
)

// decoderModel writes a synthetic decoder and returns its path.
func decoderModel(t testing.TB, cfg onnxgen.DecoderConfig) string {
	t.Helper()
	testenv.RequireORT(t)
	path := filepath.Join(t.TempDir(), "decoder.onnx")
	if err := onnxgen.Decoder(cfg).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func openDecoder(t *testing.T, path string) (*decoder, *instrument.DynamicSession) {
	t.Helper()
	return openDecoderWith(t, path, decoderOptions{})
}

func openDecoderWith(t *testing.T, path string, opt decoderOptions) (*decoder, *instrument.DynamicSession) {
	t.Helper()
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := describeDecoder(path, ins, outs, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.destroy)
	sess, err := instrument.NewDynamicSession(context.Background(), path, d.inNames, d.outNames, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close(context.Background()) })
	return d, sess
}

func TestDescribeDecoder(t *testing.T) {
	cfg := onnxgen.DecoderConfig{Layers: 3, Heads: 2, HeadDim: 8, Vocab: 40, Seed: 1}
	d, _ := openDecoder(t, decoderModel(t, cfg))
	if d.layers != 3 || d.heads != 2 || d.headDim != 8 || d.vocab != 40 {
		t.Errorf("decoder %d layers, %d heads × %d, vocabulary %d", d.layers, d.heads, d.headDim, d.vocab)
	}
	if _, ok := d.pastOf[cacheSlot{layer: 2}]; !ok {
		t.Error("past inputs not indexed by layer")
	}
	if _, ok := d.pastOf[cacheSlot{layer: 3, key: true}]; ok {
		t.Error("a fourth layer indexed")
	}

	const f32 = ort.TensorElementDataTypeFloat
	tests := []struct {
		name    string
		ins     []ort.InputOutputInfo
		outs    []ort.InputOutputInfo
		wantErr string
	}{
		{"not a decoder", []ort.InputOutputInfo{{Name: "x", Dimensions: ort.NewShape(1, 16)}}, nil, `input "x" is not one Generate can feed`},
		{"no cache", []ort.InputOutputInfo{{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)}, {Name: "attention_mask", Dimensions: ort.NewShape(-1, -1)}}, nil, "not a decoder with a key/value cache"},
		{"dynamic heads", []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)}, {Name: "attention_mask", Dimensions: ort.NewShape(-1, -1)},
			{Name: "past_key_values.0.key", Dimensions: ort.NewShape(-1, -1, -1, 8)},
		}, nil, "fixed heads and head_dim"},
		{"key without value", []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)}, {Name: "attention_mask", Dimensions: ort.NewShape(-1, -1)},
			{Name: "past_key_values.0.key", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32},
		}, nil, "layer 0 has one of"},
		{"no logits", []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)}, {Name: "attention_mask", Dimensions: ort.NewShape(-1, -1)},
			{Name: "past_key_values.0.key", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32}, {Name: "past_key_values.0.value", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32},
		}, []ort.InputOutputInfo{{Name: "scores"}}, "no output named logits"},
		{"float16 cache", []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)},
			{Name: "past_key_values.0.key", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: ort.TensorElementDataTypeFloat16},
		}, nil, `"past_key_values.0.key" holds float16`},
		{"present without past", []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)},
			{Name: "past_key_values.0.key", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32}, {Name: "past_key_values.0.value", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32},
		}, []ort.InputOutputInfo{{Name: "logits", Dimensions: ort.NewShape(-1, -1, 10), DataType: f32}, {Name: "present.1.key"}}, `output "present.1.key" has no past_key_values input`},
		{"symbolic encoder length", []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)},
			{Name: "encoder_hidden_states", Dimensions: ort.NewShape(-1, -1, 16), DataType: f32},
			{Name: "past_key_values.0.decoder.key", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32}, {Name: "past_key_values.0.decoder.value", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32},
		}, []ort.InputOutputInfo{{Name: "logits", Dimensions: ort.NewShape(-1, -1, 10), DataType: f32}, {Name: "present.0.decoder.key"}, {Name: "present.0.decoder.value"}}, "EncoderTokens"},
		{"encoder key without value", []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)},
			{Name: "past_key_values.0.decoder.key", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32}, {Name: "past_key_values.0.decoder.value", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32},
			{Name: "past_key_values.0.encoder.key", Dimensions: ort.NewShape(-1, 2, -1, 8), DataType: f32},
		}, nil, "one of its past_key_values key and value inputs without the other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := describeDecoder("m.onnx", tt.ins, tt.outs, decoderOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `"m.onnx"`) {
				t.Errorf("err = %v, want one naming the model and saying %q", err, tt.wantErr)
			}
		})
	}
}

// TestGenerateMatchesRecomputation checks the decode path with its KV cache
// against recomputing the whole sequence: every greedy token generated with
// the cache is the argmax of a cache-free prefill over the prompt and the
// tokens before it.
func TestGenerateMatchesRecomputation(t *testing.T) {
	cfg := onnxgen.DecoderConfig{Layers: 2, Heads: 2, HeadDim: 8, Vocab: 50, Seed: 11}
	d, sess := openDecoder(t, decoderModel(t, cfg))
	gens := instrument.NewGenerations()
	prompt := d.prompt(7, 3)
	const n = 6
	g, err := d.generate(context.Background(), sess, gens, prompt, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.ids) != n || g.stats.OutputTokens != n || g.stats.InputTokens != 7 {
		t.Fatalf("%d ids, stats %+v", len(g.ids), g.stats)
	}
	checkAgainstRecompute(t, d, sess, prompt, g.ids)
	// present tensors after the last token: prompt + n - 1 positions.
	want := int64(2*2*2*8*(7+n-1)) * 4
	if g.stats.KVCacheBytes != want {
		t.Errorf("KV cache %d bytes, want %d", g.stats.KVCacheBytes, want)
	}
	if g.stats.TimeToFirstToken <= 0 || g.stats.TimePerOutputToken <= 0 {
		t.Errorf("times %+v", g.stats)
	}
	// The same prompt generates the same tokens.
	g2, err := d.generate(context.Background(), sess, gens, prompt, n)
	if err != nil || len(g2.ids) != n {
		t.Fatal(err)
	}
	for i := range g.ids {
		if g.ids[i] != g2.ids[i] {
			t.Fatalf("second generation differs at %d", i)
		}
	}
}

func TestArgmaxLast(t *testing.T) {
	testenv.RequireORT(t)
	v, _ := ort.NewTensor(ort.NewShape(1, 2, 3), []float32{9, 0, 0, 1, 5, 2})
	defer v.Destroy()
	if id, err := argmaxLast(v); err != nil || id != 1 {
		t.Errorf("argmax %d, %v; want 1 (the last position only)", id, err)
	}
	i, _ := ort.NewTensor(ort.NewShape(1, 1, 2), []int64{1, 2})
	defer i.Destroy()
	if _, err := argmaxLast(i); err == nil || !strings.Contains(err.Error(), "float32") {
		t.Errorf("int64 logits: %v", err)
	}
}

// TestGenerateExportLayouts runs --generate's loop on decoders laid out as
// the real exports are — decoder-only, Optimum's merged decoder with
// use_cache_branch and position_ids, and a Whisper-style decoder with
// encoder_hidden_states and separate self- and cross-attention caches — and
// checks, on each, that every greedy token matches a cache-free
// recomputation, that the cache grows each step by what the declared
// shapes say, and that the generation's times are there.
func TestGenerateExportLayouts(t *testing.T) {
	const (
		layers, heads, headDim = 2, 2, 8
		promptLen, n, encLen   = 5, 6, 12
	)
	perToken := int64(layers * 2 * heads * headDim * 4) // key and value, float32
	tests := []struct {
		name      string
		cfg       onnxgen.DecoderConfig
		opt       decoderOptions
		crossSize int64 // the cross-attention caches, fixed after the prefill
	}{
		{"decoder-only", onnxgen.DecoderConfig{}, decoderOptions{}, 0},
		{"merged with position ids", onnxgen.DecoderConfig{Merged: true, PositionIDs: true}, decoderOptions{}, 0},
		{"whisper-style encoder-decoder", onnxgen.DecoderConfig{CrossAttention: true}, decoderOptions{encoderTokens: encLen, seed: 5}, int64(layers * 2 * heads * headDim * encLen * 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Layers, cfg.Heads, cfg.HeadDim, cfg.Vocab, cfg.Seed = layers, heads, headDim, 60, 21
			d, sess := openDecoderWith(t, decoderModel(t, cfg), tt.opt)
			if d.kvBytesPerToken != perToken || d.kvCrossBytes != tt.crossSize || d.encoderTokens != tt.opt.encoderTokens {
				t.Fatalf("decoder read as %d bytes per token, %d of cross-attention cache, %d encoder states; want %d, %d, %d",
					d.kvBytesPerToken, d.kvCrossBytes, d.encoderTokens, perToken, tt.crossSize, tt.opt.encoderTokens)
			}
			prompt := d.prompt(promptLen, 9)
			g, err := d.generate(context.Background(), sess, instrument.NewGenerations(), prompt, n)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("tokens %v; cache bytes per step %v", g.ids, g.kvBytes)

			checkAgainstRecompute(t, d, sess, prompt, g.ids)

			if len(g.kvBytes) != n {
				t.Fatalf("%d cache sizes for %d steps", len(g.kvBytes), n)
			}
			if want := int64(promptLen)*perToken + tt.crossSize; g.kvBytes[0] != want {
				t.Errorf("cache after the prefill %d bytes, want %d (%d tokens × %d + %d)", g.kvBytes[0], want, promptLen, perToken, tt.crossSize)
			}
			for i := 1; i < n; i++ {
				if grew := g.kvBytes[i] - g.kvBytes[i-1]; grew != perToken {
					t.Errorf("step %d: the cache grew %d bytes, want %d", i, grew, perToken)
				}
			}
			if g.stats.KVCacheBytes != g.kvBytes[n-1] {
				t.Errorf("KVCacheBytes %d, last step held %d", g.stats.KVCacheBytes, g.kvBytes[n-1])
			}
			if g.stats.TimeToFirstToken <= 0 || g.stats.TimePerOutputToken <= 0 || g.stats.OutputTokens != n {
				t.Errorf("stats %+v", g.stats)
			}
		})
	}
}

// FuzzDescribeDecoder feeds describeDecoder inputs and outputs with fuzzed
// names and sizes: it returns a decoder or an error naming the model, and
// never panics or allocates without bound.
func FuzzDescribeDecoder(f *testing.F) {
	testenv.RequireORT(f)
	f.Add("past_key_values.0.key", "past_key_values.0.value", "present.0.key", "present.0.value", int64(2), int64(8), int64(40), int64(0))
	f.Add("past_key_values.0.decoder.key", "past_key_values.0.decoder.value", "present.0.decoder.key", "present.0.decoder.value", int64(8), int64(36), int64(32768), int64(16))
	f.Add("past_key_values.1.encoder.key", "past_key_values.1.encoder.value", "present.1.encoder.key", "present.9.encoder.value", int64(-1), int64(0), int64(-1), int64(1<<40))
	f.Fuzz(func(t *testing.T, pk, pv, ok, ov string, heads, headDim, vocab, enc int64) {
		const f32 = ort.TensorElementDataTypeFloat
		ins := []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)},
			{Name: pk, Dimensions: ort.NewShape(-1, heads, -1, headDim), DataType: f32},
			{Name: pv, Dimensions: ort.NewShape(-1, heads, -1, headDim), DataType: f32},
			{Name: "use_cache_branch", Dimensions: ort.NewShape(1), DataType: ort.TensorElementDataTypeBool},
		}
		if enc != 0 {
			ins = append(ins, ort.InputOutputInfo{Name: "encoder_hidden_states", Dimensions: ort.NewShape(-1, enc, enc), DataType: f32})
		}
		outs := []ort.InputOutputInfo{
			{Name: "logits", Dimensions: ort.NewShape(-1, -1, vocab), DataType: f32},
			{Name: ok, Dimensions: ort.NewShape(-1, heads, -1, headDim), DataType: f32},
			{Name: ov, Dimensions: ort.NewShape(-1, heads, -1, headDim), DataType: f32},
		}
		d, err := describeDecoder("fuzz.onnx", ins, outs, decoderOptions{})
		if err != nil {
			if !strings.Contains(err.Error(), `"fuzz.onnx"`) {
				t.Errorf("error does not name the model: %v", err)
			}
			return
		}
		defer d.destroy()
		if d.layers < 1 || d.vocab < 1 || d.heads < 1 || d.headDim < 1 || d.kvBytesPerToken <= 0 {
			t.Errorf("accepted a decoder of %d layers, vocabulary %d, %d heads of %d, %d bytes per token", d.layers, d.vocab, d.heads, d.headDim, d.kvBytesPerToken)
		}
	})
}

func TestDescribeDecoderBounds(t *testing.T) {
	testenv.RequireORT(t)
	const f32 = ort.TensorElementDataTypeFloat
	past := func(heads, hd int64) []ort.InputOutputInfo {
		return []ort.InputOutputInfo{
			{Name: "input_ids", Dimensions: ort.NewShape(-1, -1)},
			{Name: "past_key_values.0.key", Dimensions: ort.NewShape(-1, heads, -1, hd), DataType: f32},
			{Name: "past_key_values.0.value", Dimensions: ort.NewShape(-1, heads, -1, hd), DataType: f32},
		}
	}
	outs := []ort.InputOutputInfo{{Name: "logits", Dimensions: ort.NewShape(-1, -1, 10), DataType: f32},
		{Name: "present.0.key"}, {Name: "present.0.value"}}
	if _, err := describeDecoder("m.onnx", past(1<<40, 1<<40), outs, decoderOptions{}); err == nil || !strings.Contains(err.Error(), "more than Generate feeds") {
		t.Errorf("2^40 heads of 2^40: %v", err)
	}
	enc := append(past(2, 8), ort.InputOutputInfo{Name: "encoder_hidden_states", Dimensions: ort.NewShape(-1, 1<<20, 1<<20), DataType: f32})
	if _, err := describeDecoder("m.onnx", enc, outs, decoderOptions{}); err == nil || !strings.Contains(err.Error(), "more than Generate feeds") {
		t.Errorf("encoder states of 2^40 values: %v", err)
	}
}

// checkAgainstRecompute feeds the whole sequence again, with no cache, at
// each step of a generation and fails when the cached decode chose another
// token than that recomputation does.
func checkAgainstRecompute(t *testing.T, d *decoder, sess *instrument.DynamicSession, prompt, ids []int64) {
	t.Helper()
	seq := append([]int64(nil), prompt...)
	for i, want := range ids {
		outs, err := d.step(context.Background(), sess, seq, 0, make([]ort.Value, len(d.inNames)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := argmaxLast(outs[d.logits])
		destroyAll(outs)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("token %d: the cached decode chose %d, recomputing the sequence gives %d", i, want, got)
		}
		seq = append(seq, want)
	}
}
