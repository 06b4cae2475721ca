package onnxgen

import (
	"fmt"
	"math"
)

// Names of the Decoder's inputs and outputs, in the Hugging Face/Optimum
// ONNX decoder convention. The per-layer cache names come from
// PastKeyName, PastValueName, PresentKeyName and PresentValueName.
const (
	DecoderInputIDs      = "input_ids"
	DecoderAttentionMask = "attention_mask"
	DecoderLogits        = "logits"
)

// PastKeyName returns the name of the key-cache input of a decoder layer:
// "past_key_values.<layer>.key".
func PastKeyName(layer int) string { return fmt.Sprintf("past_key_values.%d.key", layer) }

// PastValueName returns the name of the value-cache input of a decoder
// layer: "past_key_values.<layer>.value".
func PastValueName(layer int) string { return fmt.Sprintf("past_key_values.%d.value", layer) }

// PresentKeyName returns the name of the key-cache output of a decoder
// layer: "present.<layer>.key".
func PresentKeyName(layer int) string { return fmt.Sprintf("present.%d.key", layer) }

// PresentValueName returns the name of the value-cache output of a decoder
// layer: "present.<layer>.value".
func PresentValueName(layer int) string { return fmt.Sprintf("present.%d.value", layer) }

// Defaults for zero DecoderConfig fields: a tiny model that loads and runs
// in milliseconds.
const (
	DefaultDecoderLayers  = 2
	DefaultDecoderHeads   = 2
	DefaultDecoderHeadDim = 16
	DefaultDecoderVocab   = 128
)

// DecoderConfig sizes a Decoder. Zero fields take defaults.
type DecoderConfig struct {
	// Layers is the number of transformer blocks (default
	// DefaultDecoderLayers).
	Layers int
	// Heads is the number of attention heads (default DefaultDecoderHeads).
	Heads int
	// HeadDim is the size of one head (default DefaultDecoderHeadDim).
	HeadDim int
	// Vocab is the vocabulary size: token ids are in [0, Vocab) and logits
	// have Vocab entries (default DefaultDecoderVocab).
	Vocab int
	// Hidden is the model width (default Heads·HeadDim).
	Hidden int
	// Intermediate is the width of each block's MLP (default 4·Hidden).
	Intermediate int
	// Seed selects the weights; the same Seed always gives the same model.
	Seed uint64
}

// WithDefaults returns c with every zero size replaced by its default.
func (c DecoderConfig) WithDefaults() DecoderConfig {
	if c.Layers == 0 {
		c.Layers = DefaultDecoderLayers
	}
	if c.Heads == 0 {
		c.Heads = DefaultDecoderHeads
	}
	if c.HeadDim == 0 {
		c.HeadDim = DefaultDecoderHeadDim
	}
	if c.Vocab == 0 {
		c.Vocab = DefaultDecoderVocab
	}
	if c.Hidden == 0 {
		c.Hidden = c.Heads * c.HeadDim
	}
	if c.Intermediate == 0 {
		c.Intermediate = 4 * c.Hidden
	}
	return c
}

// InputNames returns the Decoder's input names in graph order:
// input_ids, attention_mask, then past_key_values.<i>.key and .value for
// each layer.
func (c DecoderConfig) InputNames() []string {
	c = c.WithDefaults()
	names := []string{DecoderInputIDs, DecoderAttentionMask}
	for l := range c.Layers {
		names = append(names, PastKeyName(l), PastValueName(l))
	}
	return names
}

// OutputNames returns the Decoder's output names in graph order: logits,
// then present.<i>.key and .value for each layer.
func (c DecoderConfig) OutputNames() []string {
	c = c.WithDefaults()
	names := []string{DecoderLogits}
	for l := range c.Layers {
		names = append(names, PresentKeyName(l), PresentValueName(l))
	}
	return names
}

// maskMin is added to the attention scores of masked positions; exp of it
// underflows to exactly 0 after Softmax subtracts the row maximum, and,
// unlike -Inf, it cannot turn a fully masked row into NaN.
const maskMin = -1e9

// Decoder returns a small decoder-only transformer language model with a
// KV cache, in the Hugging Face/Optimum ONNX convention, for
// time-to-first-token and time-per-output-token measurements. With
// c := cfg.WithDefaults(), H = c.Heads and D = c.HeadDim:
//
// Inputs:
//
//	input_ids                 int64 [batch, sequence]
//	attention_mask            int64 [batch, total_sequence]   (1 = attend, 0 = padding)
//	past_key_values.<i>.key   float [batch, H, past_sequence, D]   for i in [0, c.Layers)
//	past_key_values.<i>.value float [batch, H, past_sequence, D]
//
// Outputs:
//
//	logits                    float [batch, sequence, c.Vocab]
//	present.<i>.key           float [batch, H, total_sequence, D]
//	present.<i>.value         float [batch, H, total_sequence, D]
//
// where total_sequence = past_sequence + sequence. Prefill runs the whole
// prompt with empty past tensors ([batch, H, 0, D]); each decode step feeds
// one token with the previous step's present tensors as past and an
// attention mask one longer.
//
// The graph: Gather of the token embeddings; per layer a pre-norm
// (LayerNormalization) attention block — MatMul to q, k, v, Reshape to
// [b,s,H,D] (shape [0,0,H,D], so dynamic dims pass through), Transpose to
// [b,H,s,D], present = Concat(past, new, axis 2), scores = q·presentKᵀ /
// √D plus the attention bias, Softmax, ·presentV, Transpose, Reshape,
// MatMul by the output projection and a residual Add — then a pre-norm
// MLP (MatMul, Relu, MatMul, residual Add); a final LayerNormalization and
// a MatMul to the vocabulary give the logits.
//
// The attention bias, built once and shared by all layers, is the sum of a
// padding mask, (1 - Cast(attention_mask))·(-1e9) unsqueezed to
// [b,1,1,total], and a causal mask computed from the shapes of input_ids
// and attention_mask with Shape/Gather/Range/Greater, so that query
// position i (absolute position past+i) sees only keys 0..past+i: a prefill
// gives at every position exactly the logits the step-by-step decode would.
//
// The model has no position embeddings: token order reaches the logits only
// through the causal mask, and left padding masked with attention_mask
// leaves a sequence's logits unchanged.
func Decoder(cfg DecoderConfig) Model {
	c := cfg.WithDefaults()
	if c.Layers < 1 || c.Heads < 1 || c.HeadDim < 1 || c.Vocab < 1 || c.Hidden < 1 || c.Intermediate < 1 {
		return invalidModel("Decoder(%+v): sizes must be positive", cfg)
	}
	H, D := int64(c.Heads), int64(c.HeadDim)
	hidden, inner, vocab, ffn := int64(c.Hidden), H*D, int64(c.Vocab), int64(c.Intermediate)

	b := newBuilder("decoder", c.Seed)
	batch, seq, total, past := DimParam("batch"), DimParam("sequence"), DimParam("total_sequence"), DimParam("past_sequence")
	ids := b.input(DecoderInputIDs, Int64, batch, seq)
	mask := b.input(DecoderAttentionMask, Int64, batch, total)
	for l := range c.Layers {
		b.input(PastKeyName(l), Float, batch, DimValue(H), past, DimValue(D))
		b.input(PastValueName(l), Float, batch, DimValue(H), past, DimValue(D))
	}
	b.output(DecoderLogits, Float, batch, seq, DimValue(vocab))
	for l := range c.Layers {
		b.output(PresentKeyName(l), Float, batch, DimValue(H), total, DimValue(D))
		b.output(PresentValueName(l), Float, batch, DimValue(H), total, DimValue(D))
	}

	// Shared constants.
	one := b.floats("/model/constants/one", nil, 1)
	negBig := b.floats("/model/constants/mask_min", nil, maskMin)
	scale := b.floats("/model/constants/attn_scale", nil, float32(1/math.Sqrt(float64(D))))
	zeroI := b.int64s("/model/constants/zero_i64", nil, 0)
	oneI := b.int64s("/model/constants/one_i64", nil, 1)
	axes1 := b.int64s("/model/constants/axes_1", []int64{1}, 1)
	axes12 := b.int64s("/model/constants/axes_1_2", []int64{2}, 1, 2)
	shapeBSHD := b.int64s("/model/constants/shape_b_s_h_d", []int64{4}, 0, 0, H, D)
	shapeBSI := b.int64s("/model/constants/shape_b_s_inner", []int64{3}, 0, 0, inner)

	// Padding mask: [b,T] int64 -> [b,1,1,T] float, 0 where attended.
	maskF := b.node("Cast", "/model/attn_mask/Cast", in(mask), AttrInt("to", int64(Float)))
	inv := b.node("Sub", "/model/attn_mask/Sub", in(one, maskF))
	padBias := b.node("Mul", "/model/attn_mask/Mul", in(inv, negBig))
	padBias4 := b.node("Unsqueeze", "/model/attn_mask/Unsqueeze", in(padBias, axes12))

	// Causal mask: key position j is hidden from query position i when
	// j > past + i, with past = total - sequence. [s,T] float.
	idsShape := b.node("Shape", "/model/causal_mask/Shape_ids", in(ids))
	maskShape := b.node("Shape", "/model/causal_mask/Shape_mask", in(mask))
	seqLen := b.node("Gather", "/model/causal_mask/sequence", in(idsShape, oneI), AttrInt("axis", 0))
	totLen := b.node("Gather", "/model/causal_mask/total_sequence", in(maskShape, oneI), AttrInt("axis", 0))
	pastLen := b.node("Sub", "/model/causal_mask/past_sequence", in(totLen, seqLen))
	qPos := b.node("Range", "/model/causal_mask/query_positions", in(pastLen, totLen, oneI))
	kPos := b.node("Range", "/model/causal_mask/key_positions", in(zeroI, totLen, oneI))
	qCol := b.node("Unsqueeze", "/model/causal_mask/Unsqueeze", in(qPos, axes1))
	future := b.node("Greater", "/model/causal_mask/Greater", in(kPos, qCol))
	futureF := b.node("Cast", "/model/causal_mask/Cast", in(future), AttrInt("to", int64(Float)))
	causal := b.node("Mul", "/model/causal_mask/Mul", in(futureF, negBig))
	bias := b.node("Add", "/model/attn_bias/Add", in(padBias4, causal)) // [b,1,s,T]

	x := b.node("Gather", "/model/embed_tokens/Gather", in(b.weight("model.embed_tokens.weight", 1, vocab, hidden), ids), AttrInt("axis", 0))

	layerNorm := func(prefix, wprefix, x string) string {
		w := b.floats(wprefix+".weight", []int64{hidden}, ones(c.Hidden)...)
		bb := b.floats(wprefix+".bias", []int64{hidden}, make([]float32, c.Hidden)...)
		return b.node("LayerNormalization", prefix+"/LayerNormalization", in(x, w, bb),
			AttrInt("axis", -1), AttrFloat("epsilon", 1e-5))
	}
	toHeads := func(prefix, x string) string { // [b,s,H·D] -> [b,H,s,D]
		r := b.node("Reshape", prefix+"/Reshape", in(x, shapeBSHD))
		return b.node("Transpose", prefix+"/Transpose", in(r), AttrInts("perm", 0, 2, 1, 3))
	}

	for l := range c.Layers {
		p := fmt.Sprintf("/model/layers.%d", l)
		w := fmt.Sprintf("model.layers.%d", l)
		attnIn := layerNorm(p+"/input_layernorm", w+".input_layernorm", x)
		proj := func(name string) string {
			return b.node("MatMul", p+"/self_attn/"+name+"/MatMul",
				in(attnIn, b.weight(w+".self_attn."+name+".weight", matmulScale(c.Hidden), hidden, inner)))
		}
		q := toHeads(p+"/self_attn/q", proj("q_proj"))
		k := toHeads(p+"/self_attn/k", proj("k_proj"))
		v := toHeads(p+"/self_attn/v", proj("v_proj"))
		presentK := b.nodeTo("Concat", p+"/self_attn/key_cache/Concat", PresentKeyName(l), in(PastKeyName(l), k), AttrInt("axis", 2))
		presentV := b.nodeTo("Concat", p+"/self_attn/value_cache/Concat", PresentValueName(l), in(PastValueName(l), v), AttrInt("axis", 2))
		kT := b.node("Transpose", p+"/self_attn/key_T/Transpose", in(presentK), AttrInts("perm", 0, 1, 3, 2))
		scores := b.node("MatMul", p+"/self_attn/scores/MatMul", in(q, kT))
		scaled := b.node("Mul", p+"/self_attn/scores/Mul", in(scores, scale))
		masked := b.node("Add", p+"/self_attn/scores/Add", in(scaled, bias))
		probs := b.node("Softmax", p+"/self_attn/Softmax", in(masked), AttrInt("axis", -1))
		ctx := b.node("MatMul", p+"/self_attn/context/MatMul", in(probs, presentV))
		ctxT := b.node("Transpose", p+"/self_attn/context/Transpose", in(ctx), AttrInts("perm", 0, 2, 1, 3))
		ctx3 := b.node("Reshape", p+"/self_attn/context/Reshape", in(ctxT, shapeBSI))
		o := b.node("MatMul", p+"/self_attn/o_proj/MatMul",
			in(ctx3, b.weight(w+".self_attn.o_proj.weight", matmulScale(int(inner)), inner, hidden)))
		h := b.node("Add", p+"/self_attn/residual/Add", in(x, o))

		mlpIn := layerNorm(p+"/post_attention_layernorm", w+".post_attention_layernorm", h)
		up := b.node("MatMul", p+"/mlp/up_proj/MatMul",
			in(mlpIn, b.weight(w+".mlp.up_proj.weight", matmulScale(c.Hidden), hidden, ffn)))
		act := b.node("Relu", p+"/mlp/act/Relu", in(up))
		down := b.node("MatMul", p+"/mlp/down_proj/MatMul",
			in(act, b.weight(w+".mlp.down_proj.weight", matmulScale(c.Intermediate), ffn, hidden)))
		x = b.node("Add", p+"/mlp/residual/Add", in(h, down))
	}
	final := layerNorm("/model/norm", "model.norm", x)
	b.nodeTo("MatMul", "/lm_head/MatMul", DecoderLogits, in(final, b.weight("lm_head.weight", matmulScale(c.Hidden), hidden, vocab)))

	m := b.model(fmt.Sprintf("decoder-only transformer with KV cache: %d layers, %d heads of %d, hidden %d, vocab %d", c.Layers, c.Heads, c.HeadDim, c.Hidden, c.Vocab))
	m.Metadata = map[string]string{
		"ortel.decoder.layers":   fmt.Sprint(c.Layers),
		"ortel.decoder.heads":    fmt.Sprint(c.Heads),
		"ortel.decoder.head_dim": fmt.Sprint(c.HeadDim),
		"ortel.decoder.hidden":   fmt.Sprint(c.Hidden),
		"ortel.decoder.vocab":    fmt.Sprint(c.Vocab),
	}
	return m
}

func ones(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = 1
	}
	return v
}
