package onnxgen

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// testDecoderConfig is small enough to load and run in milliseconds, and has
// two layers so that a missing causal mask changes the second layer's keys.
var testDecoderConfig = DecoderConfig{Layers: 2, Heads: 2, HeadDim: 8, Vocab: 64, Seed: 7}

// decoderRun is one Run of the Decoder: logits and the present tensors
// (which the next step feeds back as past).
type decoderRun struct {
	logits      []float32
	logitsShape []int64
	present     []ort.Value // present.0.key, present.0.value, ...
}

// presentShape returns the shape of present tensor i.
func (r decoderRun) presentShape(i int) []int64 {
	return []int64(r.present[i].GetShape())
}

// lastLogits returns the logits of the last position of batch row b.
func (r decoderRun) lastLogits(b int) []float32 {
	seq, vocab := int(r.logitsShape[1]), int(r.logitsShape[2])
	off := (b*seq + seq - 1) * vocab
	return r.logits[off : off+vocab]
}

// positionLogits returns the logits of position p of batch row 0.
func (r decoderRun) positionLogits(p int) []float32 {
	vocab := int(r.logitsShape[2])
	return r.logits[p*vocab : (p+1)*vocab]
}

type decoderSession struct {
	cfg DecoderConfig
	s   *ort.DynamicAdvancedSession
}

func openDecoder(t *testing.T, cfg DecoderConfig) decoderSession {
	t.Helper()
	p := writeModel(t, Decoder(cfg), "decoder.onnx")
	return decoderSession{cfg: cfg.WithDefaults(), s: newSession(t, p, cfg.InputNames(), cfg.OutputNames())}
}

// step runs the decoder on ids (one row per batch entry) with the given
// attention mask rows; past is nil for a prefill (empty caches).
func (d decoderSession) step(t *testing.T, ids, mask [][]int64, past []ort.Value) decoderRun {
	t.Helper()
	batch, seq := int64(len(ids)), int64(len(ids[0]))
	inputs := []ort.Value{
		tensor(t, slices.Concat(ids...), batch, seq),
		tensor(t, slices.Concat(mask...), batch, int64(len(mask[0]))),
	}
	if past == nil {
		for range 2 * d.cfg.Layers {
			inputs = append(inputs, tensor(t, []float32{}, batch, int64(d.cfg.Heads), 0, int64(d.cfg.HeadDim)))
		}
	} else {
		inputs = append(inputs, past...)
	}
	outs := run(t, d.s, inputs, 1+2*d.cfg.Layers)
	logits, shape := floatsOf(t, outs[0])
	return decoderRun{logits: logits, logitsShape: shape, present: outs[1:]}
}

// prefill runs a single-row prompt with an all-ones mask.
func (d decoderSession) prefill(t *testing.T, tokens []int64) decoderRun {
	t.Helper()
	return d.step(t, [][]int64{tokens}, [][]int64{onesI64(len(tokens))}, nil)
}

// decode feeds one token after a run whose caches hold total-1 positions.
func (d decoderSession) decode(t *testing.T, token int64, prev decoderRun) decoderRun {
	t.Helper()
	total := int(prev.presentShape(0)[2]) + 1
	return d.step(t, [][]int64{{token}}, [][]int64{onesI64(total)}, prev.present)
}

func onesI64(n int) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = 1
	}
	return v
}

func argmax(v []float32) int64 {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return int64(best)
}

func TestDecoderNames(t *testing.T) {
	cfg := DecoderConfig{Layers: 2}
	wantIn := "input_ids attention_mask past_key_values.0.key past_key_values.0.value past_key_values.1.key past_key_values.1.value"
	wantOut := "logits present.0.key present.0.value present.1.key present.1.value"
	if got := strings.Join(cfg.InputNames(), " "); got != wantIn {
		t.Errorf("InputNames = %s\nwant %s", got, wantIn)
	}
	if got := strings.Join(cfg.OutputNames(), " "); got != wantOut {
		t.Errorf("OutputNames = %s\nwant %s", got, wantOut)
	}
	m := Decoder(cfg)
	var gotIn, gotOut []string
	for _, v := range m.Graph.Inputs {
		gotIn = append(gotIn, v.String())
	}
	for _, v := range m.Graph.Outputs {
		gotOut = append(gotOut, v.String())
	}
	c := cfg.WithDefaults()
	kv := fmt.Sprintf("float[batch,%d,%%s,%d]", c.Heads, c.HeadDim)
	past, present := fmt.Sprintf(kv, "past_sequence"), fmt.Sprintf(kv, "total_sequence")
	wantInDecl := []string{"input_ids int64[batch,sequence]", "attention_mask int64[batch,total_sequence]",
		"past_key_values.0.key " + past, "past_key_values.0.value " + past,
		"past_key_values.1.key " + past, "past_key_values.1.value " + past}
	wantOutDecl := []string{fmt.Sprintf("logits float[batch,sequence,%d]", c.Vocab),
		"present.0.key " + present, "present.0.value " + present,
		"present.1.key " + present, "present.1.value " + present}
	if !slices.Equal(gotIn, wantInDecl) {
		t.Errorf("declared inputs:\n got %q\nwant %q", gotIn, wantInDecl)
	}
	if !slices.Equal(gotOut, wantOutDecl) {
		t.Errorf("declared outputs:\n got %q\nwant %q", gotOut, wantOutDecl)
	}
}

func TestDecoderConfigDefaults(t *testing.T) {
	got := DecoderConfig{Heads: 3, HeadDim: 5}.WithDefaults()
	want := DecoderConfig{Layers: DefaultDecoderLayers, Heads: 3, HeadDim: 5, Vocab: DefaultDecoderVocab, Hidden: 15, Intermediate: 60}
	if got != want {
		t.Errorf("WithDefaults = %+v, want %+v", got, want)
	}
	a, _ := Decoder(DecoderConfig{Seed: 1}).Marshal()
	b, _ := Decoder(DecoderConfig{Seed: 2}).Marshal()
	if len(a) == 0 || string(a) == string(b) {
		t.Error("different seeds give the same model bytes")
	}
}

// TestDecoderPrefillThenDecode prefills a 5-token prompt, then decodes 3
// tokens chosen by argmax, checking that the KV cache grows one position
// per step and that every decode step gives the logits a full prefill of
// the same tokens gives at that position.
func TestDecoderPrefillThenDecode(t *testing.T) {
	d := openDecoder(t, testDecoderConfig)
	H, D, V := int64(d.cfg.Heads), int64(d.cfg.HeadDim), int64(d.cfg.Vocab)
	prompt := []int64{3, 14, 15, 9, 26}

	r := d.prefill(t, prompt)
	if want := []int64{1, 5, V}; !slices.Equal(r.logitsShape, want) {
		t.Fatalf("prefill logits shape %v, want %v", r.logitsShape, want)
	}
	tokens := slices.Clone(prompt)
	var steps []decoderRun
	for step := range 4 {
		for i := range 2 * d.cfg.Layers {
			if got, want := r.presentShape(i), []int64{1, H, int64(5 + step), D}; !slices.Equal(got, want) {
				t.Fatalf("after step %d: %s shape %v, want %v", step, d.cfg.OutputNames()[1+i], got, want)
			}
		}
		steps = append(steps, r)
		if step == 3 {
			break
		}
		next := argmax(r.lastLogits(0))
		tokens = append(tokens, next)
		r = d.decode(t, next, r)
		if want := []int64{1, 1, V}; !slices.Equal(r.logitsShape, want) {
			t.Fatalf("decode step %d: logits shape %v, want %v", step+1, r.logitsShape, want)
		}
	}

	// One prefill of all 8 tokens must agree with the cached path at every
	// decoded position, and its caches with the last step's caches.
	if len(tokens) != 8 {
		t.Fatalf("%d tokens after 3 decode steps, want 8", len(tokens))
	}
	full := d.prefill(t, tokens)
	for step := 1; step < 4; step++ {
		assertClose(t, fmt.Sprintf("decode step %d vs prefill position %d", step, 4+step),
			steps[step].lastLogits(0), full.positionLogits(4+step), 1e-4)
	}
	for i := range 2 * d.cfg.Layers {
		got, _ := floatsOf(t, steps[3].present[i])
		want, _ := floatsOf(t, full.present[i])
		assertClose(t, d.cfg.OutputNames()[1+i]+" after 3 decode steps vs one prefill", got, want, 1e-4)
	}
}

// TestDecoderKVCacheMatchesPrefill compares the last position of a 5-token
// prefill with a 4-token prefill followed by one decode step, for several
// model shapes.
func TestDecoderKVCacheMatchesPrefill(t *testing.T) {
	tests := []struct {
		name string
		cfg  DecoderConfig
	}{
		{"test config", testDecoderConfig},
		{"defaults", DecoderConfig{}},
		{"hidden wider than heads", DecoderConfig{Layers: 3, Heads: 2, HeadDim: 8, Hidden: 24, Intermediate: 40, Vocab: 64, Seed: 3}},
		{"one head", DecoderConfig{Layers: 2, Heads: 1, HeadDim: 4, Vocab: 64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := openDecoder(t, tt.cfg)
			prompt := []int64{5, 1, 60, 33, 7}
			whole := d.prefill(t, prompt)
			cached := d.decode(t, prompt[4], d.prefill(t, prompt[:4]))
			assertClose(t, "logits: prefill 4 + decode 1 vs prefill 5", cached.lastLogits(0), whole.lastLogits(0), 1e-4)
			// The check is only meaningful when logits depend on the
			// earlier tokens: a different history must give different
			// logits.
			other := d.decode(t, prompt[4], d.prefill(t, []int64{9, 9, 9, 9}))
			if _, same := closeEnough(other.lastLogits(0), whole.lastLogits(0), 1e-4); same {
				t.Fatal("logits do not depend on the cached tokens")
			}
		})
	}
}

// TestDecoderPrefillIsCausal checks that position p of a prefill gives the
// logits of a prefill of only the first p+1 tokens, which fails when later
// tokens leak into earlier positions.
func TestDecoderPrefillIsCausal(t *testing.T) {
	d := openDecoder(t, testDecoderConfig)
	prompt := []int64{11, 2, 47, 30, 8}
	whole := d.prefill(t, prompt)
	for p := range len(prompt) - 1 {
		t.Run(fmt.Sprintf("position %d", p), func(t *testing.T) {
			short := d.prefill(t, prompt[:p+1])
			assertClose(t, "logits", whole.positionLogits(p), short.lastLogits(0), 1e-4)
		})
	}
}

// TestDecoderAttentionMaskHidesPadding runs a batch of two: a full prompt
// and a left-padded shorter one. Each row must give the logits it gives
// alone, so padding masked out by attention_mask changes nothing.
func TestDecoderAttentionMaskHidesPadding(t *testing.T) {
	d := openDecoder(t, testDecoderConfig)
	long := []int64{4, 8, 15, 16, 23}
	short := []int64{42, 17, 3}
	batch := d.step(t,
		[][]int64{long, {0, 0, short[0], short[1], short[2]}},
		[][]int64{{1, 1, 1, 1, 1}, {0, 0, 1, 1, 1}}, nil)
	assertClose(t, "row 0 in a batch vs alone", batch.lastLogits(0), d.prefill(t, long).lastLogits(0), 1e-4)
	assertClose(t, "padded row 1 vs unpadded alone", batch.lastLogits(1), d.prefill(t, short).lastLogits(0), 1e-4)

	// With the padding attended to, the result must differ.
	unmasked := d.step(t, [][]int64{{0, 0, short[0], short[1], short[2]}}, [][]int64{onesI64(5)}, nil)
	if _, same := closeEnough(unmasked.lastLogits(0), batch.lastLogits(1), 1e-4); same {
		t.Fatal("attending to the padding tokens changes nothing; the mask check proves nothing")
	}
}

// TestDecoderExportLayouts checks the declared inputs and outputs of the
// merged and Whisper-style layouts against the names InputNames and
// OutputNames promise, and that the graphs validate.
func TestDecoderExportLayouts(t *testing.T) {
	tests := []struct {
		name          string
		cfg           DecoderConfig
		wantIn, wantO string
	}{
		{"merged with position ids", DecoderConfig{Layers: 1, Merged: true, PositionIDs: true},
			"input_ids attention_mask position_ids past_key_values.0.key past_key_values.0.value use_cache_branch",
			"logits present.0.key present.0.value"},
		{"whisper-style", DecoderConfig{Layers: 1, CrossAttention: true},
			"input_ids encoder_hidden_states past_key_values.0.decoder.key past_key_values.0.decoder.value past_key_values.0.encoder.key past_key_values.0.encoder.value use_cache_branch",
			"logits present.0.decoder.key present.0.decoder.value present.0.encoder.key present.0.encoder.value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(tt.cfg.InputNames(), " "); got != tt.wantIn {
				t.Errorf("InputNames = %s\nwant %s", got, tt.wantIn)
			}
			if got := strings.Join(tt.cfg.OutputNames(), " "); got != tt.wantO {
				t.Errorf("OutputNames = %s\nwant %s", got, tt.wantO)
			}
			m := Decoder(tt.cfg)
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			var gotIn, gotOut []string
			for _, v := range m.Graph.Inputs {
				gotIn = append(gotIn, v.Name)
			}
			for _, v := range m.Graph.Outputs {
				gotOut = append(gotOut, v.Name)
			}
			if !slices.Equal(gotIn, tt.cfg.InputNames()) || !slices.Equal(gotOut, tt.cfg.OutputNames()) {
				t.Errorf("graph declares %q -> %q", gotIn, gotOut)
			}
			for _, v := range m.Graph.Inputs {
				if v.Name == DecoderUseCacheBranch && v.String() != "use_cache_branch bool[1]" {
					t.Errorf("declared %s", v)
				}
			}
		})
	}
}
