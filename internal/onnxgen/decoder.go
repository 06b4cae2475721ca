package onnxgen

import (
	"fmt"
	"math"
)

// Names of the Decoder's inputs and outputs, in the Hugging Face/Optimum
// ONNX decoder convention. The per-layer cache names come from
// PastKeyName, PastValueName, PresentKeyName and PresentValueName.
const (
	DecoderInputIDs            = "input_ids"
	DecoderAttentionMask       = "attention_mask"
	DecoderPositionIDs         = "position_ids"
	DecoderEncoderHiddenStates = "encoder_hidden_states"
	DecoderUseCacheBranch      = "use_cache_branch"
	DecoderLogits              = "logits"
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

	// Merged adds the use_cache_branch input of Optimum's merged decoders
	// (decoder_model_merged.onnx): bool [1]. While it is false the past
	// inputs are ignored (the prefill branch); while it is true they are
	// attended to (the with-past branch).
	Merged bool
	// PositionIDs adds the position_ids input, int64 [batch, sequence], and
	// a learned position embedding of MaxPositions rows added to the token
	// embeddings, so the logits depend on the positions fed.
	PositionIDs bool
	// MaxPositions is the number of rows of the position embedding (default
	// DefaultDecoderMaxPositions); only with PositionIDs.
	MaxPositions int
	// CrossAttention makes the model the decoder of an encoder-decoder in
	// the layout of Optimum's merged Whisper decoder: no attention_mask;
	// an encoder_hidden_states input float [batch, encoder_sequence,
	// Hidden]; per layer a self-attention cache named
	// past_key_values.<i>.decoder.key/value (present.<i>.decoder.*) and a
	// cross-attention cache past_key_values.<i>.encoder.key/value
	// (present.<i>.encoder.*) that the prefill computes from the encoder
	// states and later steps feed back unchanged. It implies Merged.
	CrossAttention bool
}

// DefaultDecoderMaxPositions is the default DecoderConfig.MaxPositions.
const DefaultDecoderMaxPositions = 256

// cacheName returns the name of a cache tensor: "past_key_values" or
// "present", the layer, "decoder"/"encoder" for models with cross
// attention, and "key" or "value".
func (c DecoderConfig) cacheName(prefix string, layer int, cross, key bool) string {
	kv := "value"
	if key {
		kv = "key"
	}
	if !c.CrossAttention {
		return fmt.Sprintf("%s.%d.%s", prefix, layer, kv)
	}
	part := "decoder"
	if cross {
		part = "encoder"
	}
	return fmt.Sprintf("%s.%d.%s.%s", prefix, layer, part, kv)
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
	if c.PositionIDs && c.MaxPositions == 0 {
		c.MaxPositions = DefaultDecoderMaxPositions
	}
	if c.CrossAttention {
		c.Merged = true
	}
	return c
}

// InputNames returns the Decoder's input names in graph order:
// input_ids, attention_mask (not with CrossAttention), position_ids (with
// PositionIDs), encoder_hidden_states (with CrossAttention), then for each
// layer its past key and value (and, with CrossAttention, its encoder past
// key and value), then use_cache_branch (with Merged).
func (c DecoderConfig) InputNames() []string {
	c = c.WithDefaults()
	names := []string{DecoderInputIDs}
	if !c.CrossAttention {
		names = append(names, DecoderAttentionMask)
	}
	if c.PositionIDs {
		names = append(names, DecoderPositionIDs)
	}
	if c.CrossAttention {
		names = append(names, DecoderEncoderHiddenStates)
	}
	names = append(names, c.cacheNames("past_key_values")...)
	if c.Merged {
		names = append(names, DecoderUseCacheBranch)
	}
	return names
}

// OutputNames returns the Decoder's output names in graph order: logits,
// then for each layer its present key and value (and, with
// CrossAttention, its encoder present key and value).
func (c DecoderConfig) OutputNames() []string {
	c = c.WithDefaults()
	return append([]string{DecoderLogits}, c.cacheNames("present")...)
}

func (c DecoderConfig) cacheNames(prefix string) []string {
	var names []string
	for l := range c.Layers {
		names = append(names, c.cacheName(prefix, l, false, true), c.cacheName(prefix, l, false, false))
		if c.CrossAttention {
			names = append(names, c.cacheName(prefix, l, true, true), c.cacheName(prefix, l, true, false))
		}
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
//
// The options lay the model out as other real exports are: Merged adds
// use_cache_branch (each past tensor is sliced to none of its positions
// while it is false), PositionIDs adds position_ids and a position
// embedding, and CrossAttention gives the layout of a merged Whisper
// decoder — no attention_mask (the causal mask takes the past length from
// the first self-attention cache), encoder_hidden_states, and per layer a
// pre-norm cross-attention block between the self-attention and the MLP
// whose keys and values are computed from the encoder states on the
// prefill and taken from the encoder cache afterwards.
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
	var mask, posIDs, encStates, useCache string
	if !c.CrossAttention {
		mask = b.input(DecoderAttentionMask, Int64, batch, total)
	}
	if c.PositionIDs {
		posIDs = b.input(DecoderPositionIDs, Int64, batch, seq)
	}
	if c.CrossAttention {
		encStates = b.input(DecoderEncoderHiddenStates, Float, batch, DimParam("encoder_sequence"), DimValue(hidden))
	}
	encPast, encTotal := DimParam("encoder_past_sequence"), DimParam("encoder_total_sequence")
	for l := range c.Layers {
		b.input(c.cacheName("past_key_values", l, false, true), Float, batch, DimValue(H), past, DimValue(D))
		b.input(c.cacheName("past_key_values", l, false, false), Float, batch, DimValue(H), past, DimValue(D))
		if c.CrossAttention {
			b.input(c.cacheName("past_key_values", l, true, true), Float, batch, DimValue(H), encPast, DimValue(D))
			b.input(c.cacheName("past_key_values", l, true, false), Float, batch, DimValue(H), encPast, DimValue(D))
		}
	}
	if c.Merged {
		useCache = b.input(DecoderUseCacheBranch, Bool, DimValue(1))
	}
	b.output(DecoderLogits, Float, batch, seq, DimValue(vocab))
	for l := range c.Layers {
		b.output(c.cacheName("present", l, false, true), Float, batch, DimValue(H), total, DimValue(D))
		b.output(c.cacheName("present", l, false, false), Float, batch, DimValue(H), total, DimValue(D))
		if c.CrossAttention {
			b.output(c.cacheName("present", l, true, true), Float, batch, DimValue(H), encTotal, DimValue(D))
			b.output(c.cacheName("present", l, true, false), Float, batch, DimValue(H), encTotal, DimValue(D))
		}
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

	// The merged decoders' branch: a past tensor is sliced to its first
	// use·2^40 positions along the sequence axis, all of it while
	// use_cache_branch is true and none while it is false; a computed
	// cross-attention cache the other way round.
	var keepPast, keepNew, startsI, axes2 string
	if c.Merged {
		big := b.int64s("/model/constants/all_positions", []int64{1}, 1<<40)
		startsI = b.int64s("/model/constants/starts_0", []int64{1}, 0)
		axes2 = b.int64s("/model/constants/axes_2", []int64{1}, 2)
		useI := b.node("Cast", "/model/use_cache_branch/Cast", in(useCache), AttrInt("to", int64(Int64)))
		keepPast = b.node("Mul", "/model/use_cache_branch/keep_past", in(useI, big))
		notI := b.node("Sub", "/model/use_cache_branch/Not", in(oneI, useI))
		keepNew = b.node("Mul", "/model/use_cache_branch/keep_new", in(notI, big))
	}
	branch := func(name, x, keep string) string {
		if !c.Merged {
			return x
		}
		return b.node("Slice", name, in(x, startsI, keep, axes2))
	}
	selfPast := func(l int, key bool) string {
		n := c.cacheName("past_key_values", l, false, key)
		return branch(fmt.Sprintf("/model/layers.%d/self_attn/past_%s/Slice", l, map[bool]string{true: "key", false: "value"}[key]), n, keepPast)
	}
	var pastK0, encNew string
	if c.Merged {
		pastK0 = selfPast(0, true)
	}
	if c.CrossAttention {
		// The encoder states the cross-attention caches are computed
		// from: all of them on the prefill, none on later steps, so a
		// decode step costs what a real with-past branch does.
		encNew = b.node("Slice", "/model/encoder_states/Slice", in(encStates, startsI, keepNew, axes1))
	}

	var bias string
	if mask != "" {
		// Padding mask: [b,T] int64 -> [b,1,1,T] float, 0 where attended.
		maskF := b.node("Cast", "/model/attn_mask/Cast", in(mask), AttrInt("to", int64(Float)))
		inv := b.node("Sub", "/model/attn_mask/Sub", in(one, maskF))
		padBias := b.node("Mul", "/model/attn_mask/Mul", in(inv, negBig))
		bias = b.node("Unsqueeze", "/model/attn_mask/Unsqueeze", in(padBias, axes12))
	}

	// Causal mask: key position j is hidden from query position i when
	// j > past + i, with past = total - sequence. [s,T] float.
	idsShape := b.node("Shape", "/model/causal_mask/Shape_ids", in(ids))
	var maskShape, pastLen, totLen string
	if mask != "" {
		maskShape = b.node("Shape", "/model/causal_mask/Shape_mask", in(mask))
	}
	seqLen := b.node("Gather", "/model/causal_mask/sequence", in(idsShape, oneI), AttrInt("axis", 0))
	if mask != "" {
		totLen = b.node("Gather", "/model/causal_mask/total_sequence", in(maskShape, oneI), AttrInt("axis", 0))
		pastLen = b.node("Sub", "/model/causal_mask/past_sequence", in(totLen, seqLen))
	} else {
		// No attention_mask: the past length is the self-attention
		// cache's.
		pastShape := b.node("Shape", "/model/causal_mask/Shape_past", in(pastK0))
		two := b.int64s("/model/constants/two_i64", nil, 2)
		pastLen = b.node("Gather", "/model/causal_mask/past_sequence", in(pastShape, two), AttrInt("axis", 0))
		totLen = b.node("Add", "/model/causal_mask/total_sequence", in(pastLen, seqLen))
	}
	qPos := b.node("Range", "/model/causal_mask/query_positions", in(pastLen, totLen, oneI))
	kPos := b.node("Range", "/model/causal_mask/key_positions", in(zeroI, totLen, oneI))
	qCol := b.node("Unsqueeze", "/model/causal_mask/Unsqueeze", in(qPos, axes1))
	future := b.node("Greater", "/model/causal_mask/Greater", in(kPos, qCol))
	futureF := b.node("Cast", "/model/causal_mask/Cast", in(future), AttrInt("to", int64(Float)))
	causal := b.node("Mul", "/model/causal_mask/Mul", in(futureF, negBig))
	if bias != "" {
		bias = b.node("Add", "/model/attn_bias/Add", in(bias, causal)) // [b,1,s,T]
	} else {
		bias = causal // [s,T]
	}

	x := b.node("Gather", "/model/embed_tokens/Gather", in(b.weight("model.embed_tokens.weight", 1, vocab, hidden), ids), AttrInt("axis", 0))
	if c.PositionIDs {
		pos := b.node("Gather", "/model/embed_positions/Gather", in(b.weight("model.embed_positions.weight", 1, int64(c.MaxPositions), hidden), posIDs), AttrInt("axis", 0))
		x = b.node("Add", "/model/embed_positions/Add", in(x, pos))
	}

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
		pastK, pastV := c.cacheName("past_key_values", l, false, true), c.cacheName("past_key_values", l, false, false)
		if c.Merged {
			if l == 0 {
				pastK = pastK0
			} else {
				pastK = selfPast(l, true)
			}
			pastV = selfPast(l, false)
		}
		presentK := b.nodeTo("Concat", p+"/self_attn/key_cache/Concat", c.cacheName("present", l, false, true), in(pastK, k), AttrInt("axis", 2))
		presentV := b.nodeTo("Concat", p+"/self_attn/value_cache/Concat", c.cacheName("present", l, false, false), in(pastV, v), AttrInt("axis", 2))
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

		if c.CrossAttention {
			// Cross attention over the encoder states: the prefill
			// computes their keys and values, later steps take them from
			// the encoder cache.
			pc, wc := p+"/encoder_attn", w+".encoder_attn"
			crossIn := layerNorm(pc+"_layernorm", wc+"_layernorm", h)
			cq := toHeads(pc+"/q", b.node("MatMul", pc+"/q_proj/MatMul",
				in(crossIn, b.weight(wc+".q_proj.weight", matmulScale(c.Hidden), hidden, inner))))
			cache := func(name string, key bool) string {
				kv := b.node("MatMul", pc+"/"+name+"/MatMul", in(encNew, b.weight(wc+"."+name+".weight", matmulScale(c.Hidden), hidden, inner)))
				fresh := toHeads(pc+"/"+name, kv)
				old := branch(pc+"/"+name+"/past/Slice", c.cacheName("past_key_values", l, true, key), keepPast)
				return b.nodeTo("Concat", pc+"/"+name+"/cache/Concat", c.cacheName("present", l, true, key), in(old, fresh), AttrInt("axis", 2))
			}
			ck, cv := cache("k_proj", true), cache("v_proj", false)
			ckT := b.node("Transpose", pc+"/key_T/Transpose", in(ck), AttrInts("perm", 0, 1, 3, 2))
			cs := b.node("Mul", pc+"/scores/Mul", in(b.node("MatMul", pc+"/scores/MatMul", in(cq, ckT)), scale))
			cp := b.node("Softmax", pc+"/Softmax", in(cs), AttrInt("axis", -1))
			cctx := b.node("MatMul", pc+"/context/MatMul", in(cp, cv))
			cctxT := b.node("Transpose", pc+"/context/Transpose", in(cctx), AttrInts("perm", 0, 2, 1, 3))
			cctx3 := b.node("Reshape", pc+"/context/Reshape", in(cctxT, shapeBSI))
			co := b.node("MatMul", pc+"/out_proj/MatMul",
				in(cctx3, b.weight(wc+".out_proj.weight", matmulScale(int(inner)), inner, hidden)))
			h = b.node("Add", pc+"/residual/Add", in(h, co))
		}

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
