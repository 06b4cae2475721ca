package bench

import (
	"context"
	"math"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/test/testenv"
)

// moonshineDecoder is the real decoder scripts/fetch.sh decoder fetches:
// Moonshine tiny's merged decoder, int8, from its npm package.
const moonshineDecoder = "moonshine-tiny-decoder_model_merged.onnx"

// TestGenerateRealDecoder generates on a real autoregressive decoder
// (Moonshine tiny: merged, use_cache_branch, encoder_hidden_states, decoder
// and encoder caches), reading every name and size from the model: the
// cache grows each step by what the declared shapes say, the
// cross-attention cache is the prefill's, each cached greedy token is the
// one a cache-free recomputation of the whole sequence picks, and the
// generation's times are there.
func TestGenerateRealDecoder(t *testing.T) {
	testenv.RequireORT(t)
	path := testenv.Model(t, moonshineDecoder)
	const (
		promptLen, n, encLen = 3, 6, 40 // 40 encoder states: 1 s of audio
		layers, heads, hd    = 6, 8, 36
	)
	d, sess := openDecoderWith(t, path, decoderOptions{encoderTokens: encLen, seed: 2})
	if d.layers != layers || d.heads != heads || d.headDim != hd || d.vocab != 32768 || d.encoderTokens != encLen {
		t.Fatalf("read %d layers, %d heads × %d, vocabulary %d, %d encoder states", d.layers, d.heads, d.headDim, d.vocab, d.encoderTokens)
	}
	perToken := int64(layers * 2 * heads * hd * 4)
	cross := int64(layers*2*heads*hd*encLen) * 4
	if d.kvBytesPerToken != perToken || d.kvCrossBytes != cross {
		t.Fatalf("%d bytes per token, %d of cross-attention cache; want %d, %d", d.kvBytesPerToken, d.kvCrossBytes, perToken, cross)
	}

	prompt := []int64{1, 400, 800} // BOS, then two ordinary tokens
	g, err := d.generate(context.Background(), sess, instrument.NewGenerations(), prompt, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tokens %v; cache bytes per step %v; TTFT %v, TPOT %v", g.ids, g.kvBytes, g.stats.TimeToFirstToken, g.stats.TimePerOutputToken)
	if len(g.kvBytes) != n || g.kvBytes[0] != promptLen*perToken+cross {
		t.Fatalf("cache per step %v; want %d after the prefill", g.kvBytes, promptLen*perToken+cross)
	}
	for i := 1; i < n; i++ {
		if grew := g.kvBytes[i] - g.kvBytes[i-1]; grew != perToken {
			t.Errorf("step %d: the cache grew %d bytes, want %d", i, grew, perToken)
		}
	}
	if g.stats.TimeToFirstToken <= 0 || g.stats.TimePerOutputToken <= 0 || g.stats.OutputTokens != n || g.stats.KVCacheBytes != g.kvBytes[n-1] {
		t.Errorf("stats %+v", g.stats)
	}

	// The cached decode against a cache-free recomputation of the whole
	// sequence: the int8 model quantizes its activations per run, so a
	// one-token step and a prefill round differently and the logits are
	// compared by their relative distance (measured 0.05-0.19 here; feeding
	// the last token without its cache gives 0.48-1.28), and each greedy
	// token must be among the recomputation's near-best.
	past := make([]ort.Value, len(d.inNames))
	defer destroyAll(past)
	seq := append([]int64(nil), prompt...)
	feed, total := seq, 0
	for i := range n {
		outs, err := d.step(context.Background(), sess, feed, total, past)
		if err != nil {
			t.Fatal(err)
		}
		total += len(feed)
		cached := lastLogits(outs[d.logits], d.vocab)
		d.keep(past, outs)
		tok := argmax(cached)
		if tok != g.ids[i] {
			// generate took the same path; only the recomputation below
			// may differ.
			t.Fatalf("token %d: this loop chose %d, generate %d", i, tok, g.ids[i])
		}
		seq = append(seq, tok)
		feed = []int64{tok}

		ref, err := d.step(context.Background(), sess, seq[:len(seq)-1], 0, make([]ort.Value, len(d.inNames)))
		if err != nil {
			t.Fatal(err)
		}
		want := lastLogits(ref[d.logits], d.vocab)
		destroyAll(ref)
		if dist := relDistance(cached, want); dist > 0.3 {
			t.Errorf("token %d: the cached decode's logits are %.2f (relative) from the recomputation's", i, dist)
		}
		if gap := want[argmax(want)] - want[tok]; gap > 1 {
			t.Errorf("token %d: greedy chose %d, %.2f below the recomputation's best %d", i, tok, gap, argmax(want))
		}
	}
}

func lastLogits(v ort.Value, vocab int) []float32 {
	t := v.(*ort.Tensor[float32])
	data := t.GetData()
	return append([]float32(nil), data[len(data)-vocab:]...)
}

func argmax(x []float32) int64 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int64(best)
}

// relDistance is |a-b| / |b| (Euclidean).
func relDistance(a, b []float32) float64 {
	var num, den float64
	for i := range b {
		num += float64(a[i]-b[i]) * float64(a[i]-b[i])
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

// TestGenerateRealEncoder feeds Moonshine tiny's decoder the output of its
// real encoder, run once on a second of seeded audio, and checks that the
// states must fit the decoder they are fed to.
func TestGenerateRealEncoder(t *testing.T) {
	testenv.RequireORT(t)
	dec := testenv.Model(t, moonshineDecoder)
	enc := testenv.Model(t, "moonshine-tiny-encoder_model.onnx")
	oneSecond := map[string][]int64{"input_values": {1, 16000}}

	run, err := runEncoder(enc, oneSecond, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := run.states.GetShape(); len(got) != 3 || got[1] != 40 || got[2] != 288 || run.input != "input_values [1 16000]" {
		t.Fatalf("encoder gave %v from %q", got, run.input)
	}
	ins, outs, err := ort.GetInputOutputInfo(dec)
	if err != nil {
		t.Fatal(err)
	}
	d, err := describeDecoder(dec, ins, outs, decoderOptions{encoderStates: run.states})
	if err != nil {
		run.states.Destroy()
		t.Fatal(err)
	}
	defer d.destroy()
	if d.encoderTokens != 40 || d.kvCrossBytes != 6*2*8*36*40*4 {
		t.Errorf("%d encoder states, %d bytes of cross-attention cache", d.encoderTokens, d.kvCrossBytes)
	}
	sess, err := instrument.NewDynamicSession(context.Background(), dec, d.inNames, d.outNames, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(context.Background())
	g, err := d.generate(context.Background(), sess, instrument.NewGenerations(), []int64{1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tokens from a second of seeded audio: %v", g.ids)
	if len(g.ids) != 3 || g.kvBytes[0] != 6*2*8*36*4+d.kvCrossBytes {
		t.Errorf("tokens %v, cache per step %v", g.ids, g.kvBytes)
	}

	// States that do not fit: another hidden size, or a decoder without
	// encoder_hidden_states. The caller keeps them on an error.
	for _, tt := range []struct {
		name string
		cfg  onnxgen.DecoderConfig
		want string
	}{
		{"hidden 16", onnxgen.DecoderConfig{CrossAttention: true, Heads: 2, HeadDim: 8}, "the encoder's output has shape [1 40 288]"},
		{"decoder-only", onnxgen.DecoderConfig{}, "no encoder_hidden_states input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run, err := runEncoder(enc, oneSecond, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer run.states.Destroy()
			p := decoderModel(t, tt.cfg)
			ins, outs, err := ort.GetInputOutputInfo(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := describeDecoder(p, ins, outs, decoderOptions{encoderStates: run.states}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := runEncoder(enc, nil, 1); err == nil || !strings.Contains(err.Error(), "input_values") {
		t.Errorf("an encoder with a dynamic input and no shape: %v", err)
	}
}
