package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// Names of a decoder's inputs and outputs in the Hugging Face/Optimum ONNX
// convention that --generate drives (as transformers.js and ONNX Runtime
// GenAI exports name them).
const (
	inputIDs       = "input_ids"
	attentionMask  = "attention_mask"
	positionIDs    = "position_ids"
	useCacheBranch = "use_cache_branch"
	encoderStates  = "encoder_hidden_states"
	logitsName     = "logits"
)

var (
	// past_key_values.<layer>.key, or with an encoder-decoder's split
	// caches past_key_values.<layer>.decoder.key / .encoder.key.
	pastRe    = regexp.MustCompile(`^past_key_values\.(\d+)\.(?:(decoder|encoder)\.)?(key|value)$`)
	presentRe = regexp.MustCompile(`^present\.(\d+)\.(?:(decoder|encoder)\.)?(key|value)$`)
	// num_logits_to_keep / logits_to_keep: how many last positions get
	// logits; --generate feeds 1.
	logitsToKeepRe = regexp.MustCompile(`^(num_)?logits_to_keep$`)
)

// DefaultPromptTokens is the prompt length of --generate.
const DefaultPromptTokens = 32

// cacheSlot names one cache tensor: a layer's key or value, of its
// self-attention or (cross) of its attention over the encoder.
type cacheSlot struct {
	layer      int
	cross, key bool
}

// decoder describes an autoregressive decoder with a key/value cache, read
// from its inputs and outputs, and holds what every generation reuses. It
// drives decoder-only models (input_ids, attention_mask, position_ids,
// past_key_values.<i>.key/value), Optimum's merged decoders
// (use_cache_branch) and the decoders of encoder-decoders such as Whisper
// (encoder_hidden_states, past_key_values.<i>.decoder.* and .encoder.*).
type decoder struct {
	layers, heads, headDim, vocab int
	// encoderTokens is the length of encoder_hidden_states (0: none).
	encoderTokens int
	// kvBytesPerToken is what one more token adds to the self-attention
	// caches, from their declared heads and head sizes; kvCrossBytes the
	// size of the cross-attention caches, fixed after the prefill.
	kvBytesPerToken, kvCrossBytes int64

	inNames  []string // model order
	outNames []string
	inKind   []inputKind
	inSlot   []cacheSlot // for past inputs
	inDims   []ort.Shape // declared
	outSlot  []cacheSlot // for present outputs
	outCache []bool      // whether output k is a present cache
	logits   int         // index of logits among the outputs
	pastOf   map[cacheSlot]int
	// Tensors built once: empty past tensors [1, H, 0, D] per past input,
	// use_cache_branch false and true, the encoder states, logits-to-keep.
	empty                 []ort.Value
	branchOff, branchOn   ort.Value
	encStates, keepLogits ort.Value
}

type inputKind int

const (
	kindIDs inputKind = iota
	kindMask
	kindPositions
	kindPast
	kindCacheBranch
	kindEncoderStates
	kindLogitsToKeep
)

// Bounds on the encoder states --generate builds, so that a model that
// declares absurd sizes fails instead of exhausting memory.
const (
	maxEncoderTokens   = 100000
	maxEncoderElements = 1 << 28 // 1 GiB of float32
	// maxCacheRow bounds heads × head_dim of one cache tensor.
	maxCacheRow = 1 << 20
)

// decoderOptions are the sizes the model may leave open.
type decoderOptions struct {
	// encoderTokens sets the length of encoder_hidden_states when the
	// model declares it symbolic (Whisper: 1500).
	encoderTokens int
	// encoderStates, when not nil, are the states to feed (an encoder's
	// output, float [1, tokens, hidden]); the decoder describeDecoder
	// returns owns them, and on an error the caller still does.
	encoderStates ort.Value
	seed          uint64
}

// describeDecoder checks that the model follows the convention, reads its
// sizes and builds the tensors every generation feeds.
func describeDecoder(path string, ins, outs []ort.InputOutputInfo, opt decoderOptions) (*decoder, error) {
	d := &decoder{logits: -1, pastOf: map[cacheSlot]int{}}
	layers := map[int]bool{}
	hasIDs := false
	var encDims ort.Shape
	for k, i := range ins {
		d.inNames = append(d.inNames, i.Name)
		d.inDims = append(d.inDims, i.Dimensions)
		var slot cacheSlot
		kind := kindPast
		switch {
		case i.Name == inputIDs:
			kind, hasIDs = kindIDs, true
		case i.Name == attentionMask:
			kind = kindMask
		case i.Name == positionIDs:
			kind = kindPositions
		case i.Name == useCacheBranch:
			kind = kindCacheBranch
		case i.Name == encoderStates:
			kind, encDims = kindEncoderStates, i.Dimensions
		case logitsToKeepRe.MatchString(i.Name):
			kind = kindLogitsToKeep
		default:
			m := pastRe.FindStringSubmatch(i.Name)
			if m == nil {
				return nil, invalid("model %q: input %q is not one {Generate} can feed (it feeds input_ids, attention_mask, position_ids, use_cache_branch, encoder_hidden_states, num_logits_to_keep and past_key_values.<layer>[.decoder|.encoder].key/value)", path, i.Name)
			}
			layer, _ := strconv.Atoi(m[1])
			slot = cacheSlot{layer: layer, cross: m[2] == "encoder", key: m[3] == "key"}
			if _, dup := d.pastOf[slot]; dup {
				return nil, fmt.Errorf("model %q: input %q repeats a cache", path, i.Name)
			}
			d.pastOf[slot] = k
			layers[layer] = true
			if len(i.Dimensions) != 4 || i.Dimensions[1] <= 0 || i.Dimensions[3] <= 0 {
				return nil, invalid("model %q: input %q is declared %s; {Generate} needs [batch, heads, past_sequence, head_dim] with fixed heads and head_dim", path, i.Name, dimsText(i.Dimensions))
			}
			if i.Dimensions[1]*i.Dimensions[3] > maxCacheRow || i.Dimensions[1] > maxCacheRow || i.Dimensions[3] > maxCacheRow {
				return nil, invalid("model %q: input %q is declared %s: %d heads of %d is more than {Generate} feeds (at most %d values per token)", path, i.Name, dimsText(i.Dimensions), i.Dimensions[1], i.Dimensions[3], maxCacheRow)
			}
			if i.DataType != ort.TensorElementDataTypeFloat {
				return nil, invalid("model %q: input %q holds %s; {Generate} feeds float32 caches (the Go binding copies float16 outputs short, so a float16 export cannot run here: take its float32 or quantized export)", path, i.Name, dtypeName(i.DataType))
			}
			h, hd := int(i.Dimensions[1]), int(i.Dimensions[3])
			if !slot.cross {
				d.kvBytesPerToken += int64(h*hd) * 4
				if d.heads == 0 {
					d.heads, d.headDim = h, hd
				}
			}
		}
		d.inKind = append(d.inKind, kind)
		d.inSlot = append(d.inSlot, slot)
	}
	if !hasIDs || len(layers) == 0 {
		return nil, invalid("model %q is not a decoder with a key/value cache: {Generate} needs inputs input_ids and past_key_values.<layer>.key/value", path)
	}
	for l := range layers {
		for _, cross := range []bool{false, true} {
			_, k := d.pastOf[cacheSlot{l, cross, true}]
			_, v := d.pastOf[cacheSlot{l, cross, false}]
			if k != v || (!cross && !k) {
				return nil, fmt.Errorf("model %q: layer %d has one of its past_key_values key and value inputs without the other", path, l)
			}
		}
	}
	d.layers = len(layers)
	presents := 0
	for k, o := range outs {
		d.outNames = append(d.outNames, o.Name)
		var slot cacheSlot
		isCache := false
		if o.Name == logitsName {
			d.logits = k
			if len(o.Dimensions) == 3 && o.Dimensions[2] > 0 {
				d.vocab = int(o.Dimensions[2])
			}
		} else if m := presentRe.FindStringSubmatch(o.Name); m != nil {
			layer, _ := strconv.Atoi(m[1])
			slot = cacheSlot{layer: layer, cross: m[2] == "encoder", key: m[3] == "key"}
			if _, ok := d.pastOf[slot]; !ok {
				return nil, fmt.Errorf("model %q: output %q has no past_key_values input to feed it back to", path, o.Name)
			}
			isCache = true
			presents++
		}
		d.outSlot = append(d.outSlot, slot)
		d.outCache = append(d.outCache, isCache)
	}
	if d.logits < 0 {
		return nil, fmt.Errorf("model %q has no output named logits", path)
	}
	if presents != len(d.pastOf) {
		return nil, fmt.Errorf("model %q: %d present.* outputs for %d past_key_values.* inputs", path, presents, len(d.pastOf))
	}
	if d.vocab == 0 {
		return nil, invalid("model %q: output logits is declared %s; {Generate} needs a fixed vocabulary size as its last dimension", path, dimsText(outs[d.logits].Dimensions))
	}
	if lt := outs[d.logits].DataType; lt != ort.TensorElementDataTypeFloat {
		return nil, invalid("model %q: output logits holds %s; {Generate} reads float32 logits", path, dtypeName(lt))
	}
	if encDims != nil {
		if len(encDims) != 3 || encDims[2] <= 0 {
			return nil, invalid("model %q: input encoder_hidden_states is declared %s; {Generate} needs [batch, encoder_sequence, hidden] with a fixed hidden size", path, dimsText(encDims))
		}
		d.encoderTokens = int(encDims[1])
		if opt.encoderTokens > 0 {
			d.encoderTokens = opt.encoderTokens
		}
		if opt.encoderStates != nil {
			s := opt.encoderStates.GetShape()
			if len(s) != 3 || s[0] != 1 || s[2] != encDims[2] || (encDims[1] > 0 && s[1] != encDims[1]) {
				return nil, fmt.Errorf("model %q: the encoder's output has shape %v; input encoder_hidden_states is declared %s", path, s, dimsText(encDims))
			}
			d.encoderTokens = int(s[1])
		}
		if d.encoderTokens <= 0 {
			return nil, invalid("model %q: input encoder_hidden_states has a symbolic length; give it with {EncoderTokens} (Whisper: 1500)", path)
		}
		if n := int64(d.encoderTokens) * encDims[2]; d.encoderTokens > maxEncoderTokens || encDims[2] > maxEncoderTokens || n > maxEncoderElements {
			return nil, invalid("model %q: encoder_hidden_states of %d × %d values is more than {Generate} feeds (at most %d)", path, d.encoderTokens, encDims[2], int64(maxEncoderElements))
		}
	}
	if opt.encoderStates != nil && encDims == nil {
		return nil, fmt.Errorf("model %q has no encoder_hidden_states input to feed an encoder's output to", path)
	}
	if err := d.build(encDims, opt.seed, opt.encoderStates != nil); err != nil {
		d.destroy()
		return nil, fmt.Errorf("model %q: %w", path, err)
	}
	if opt.encoderStates != nil {
		d.encStates = opt.encoderStates
	}
	return d, nil
}

// build creates the tensors every generation feeds.
func (d *decoder) build(encDims ort.Shape, seed uint64, haveStates bool) error {
	var err error
	d.empty = make([]ort.Value, len(d.inNames))
	for k, kind := range d.inKind {
		dims := d.inDims[k]
		switch kind {
		case kindPast:
			d.empty[k], err = ort.NewTensor(ort.NewShape(1, dims[1], 0, dims[3]), []float32{})
			if d.inSlot[k].cross {
				d.kvCrossBytes += dims[1] * dims[3] * int64(d.encoderTokens) * 4
			}
		case kindCacheBranch:
			if d.branchOff, err = ort.NewTensor(ort.NewShape(1), []bool{false}); err == nil {
				d.branchOn, err = ort.NewTensor(ort.NewShape(1), []bool{true})
			}
		case kindEncoderStates:
			if haveStates {
				continue
			}
			// Seeded values in [-1, 1): the decoder's attention over them
			// costs what it costs over a real encoder's output.
			hidden := int(encDims[2])
			rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
			v := make([]float32, d.encoderTokens*hidden)
			for i := range v {
				v[i] = 2*rng.Float32() - 1
			}
			d.encStates, err = ort.NewTensor(ort.NewShape(1, int64(d.encoderTokens), int64(hidden)), v)
		case kindLogitsToKeep:
			shape := ort.NewShape(1)
			if len(dims) == 0 {
				shape = ort.Shape{}
			}
			d.keepLogits, err = ort.NewTensor(shape, []int64{1})
		}
		if err != nil {
			return fmt.Errorf("create the tensor for input %q: %w", d.inNames[k], err)
		}
	}
	return nil
}

func (d *decoder) destroy() {
	destroyAll(d.empty)
	destroyAll([]ort.Value{d.branchOff, d.branchOn, d.encStates, d.keepLogits})
	d.empty, d.branchOff, d.branchOn, d.encStates, d.keepLogits = nil, nil, nil, nil, nil
}

// prompt returns n token ids drawn from the vocabulary with a seeded PRNG.
func (d *decoder) prompt(n int, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, seed^0x2545f4914f6cdd1d))
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(rng.IntN(d.vocab))
	}
	return ids
}

// generation is what one generation produced.
type generation struct {
	stats instrument.GenerationStats
	ids   []int64
	// kvBytes is the size of the cache held after each step: the prefill,
	// then one entry per decoded token.
	kvBytes []int64
}

// generate runs one greedy generation of n tokens from prompt: a prefill
// run over the whole prompt with empty caches, then one run per further
// token, each feeding the previous token and the previous run's present
// tensors as the past. The cross-attention caches of an encoder-decoder
// are the prefill's, fed back unchanged. Every run nests under the
// generation's prefill or decode span.
func (d *decoder) generate(ctx context.Context, sess *instrument.DynamicSession, gens *instrument.Generations, prompt []int64, n int) (generation, error) {
	ctx, g := gens.Start(ctx, len(prompt))
	var (
		past    = make([]ort.Value, len(d.inNames)) // the cache for the next run
		outputs []ort.Value
		gen     generation
		err     error
	)
	defer destroyAll(past)
	feed := prompt
	total := 0
	for step := 0; step < n; step++ {
		outputs, err = d.step(ctx, sess, feed, total, past)
		if err != nil {
			break
		}
		total += len(feed)
		tok, aerr := argmaxLast(outputs[d.logits])
		if aerr != nil {
			err = aerr
			destroyAll(outputs)
			break
		}
		gen.ids = append(gen.ids, tok)
		ctx = g.Token()
		held := d.keep(past, outputs)
		gen.kvBytes = append(gen.kvBytes, held)
		if step == n-1 {
			g.SetKVCacheBytes(held)
		}
		feed = []int64{tok}
	}
	gen.stats = g.End(err)
	if err != nil {
		return generation{}, err
	}
	return gen, nil
}

// keep makes a run's present tensors the next run's past and frees the
// other outputs; it returns the bytes of the cache now held. The
// cross-attention caches stay the prefill's: the encoder's keys and values
// do not change, and a merged decoder's with-past branch returns
// placeholders for them (Moonshine: [0, heads, 1, head_dim]).
func (d *decoder) keep(past, outputs []ort.Value) int64 {
	var held int64
	for k, v := range outputs {
		if !d.outCache[k] {
			v.Destroy()
			continue
		}
		in := d.pastOf[d.outSlot[k]]
		if d.outSlot[k].cross && past[in] != nil {
			v.Destroy()
		} else {
			if past[in] != nil {
				past[in].Destroy()
			}
			past[in] = v
		}
		held += tensorBytes(past[in])
	}
	return held
}

// step runs the model on feed (the new tokens), with past holding the
// cache of the total tokens before them (nil entries: empty, the prefill).
func (d *decoder) step(ctx context.Context, sess *instrument.DynamicSession, feed []int64, total int, past []ort.Value) ([]ort.Value, error) {
	inputs := make([]ort.Value, len(d.inNames))
	var owned []ort.Value
	defer func() { destroyAll(owned) }()
	seq := int64(len(feed))
	for k, kind := range d.inKind {
		var v ort.Value
		var err error
		switch kind {
		case kindIDs:
			v, err = ort.NewTensor(ort.NewShape(1, seq), append([]int64(nil), feed...))
		case kindMask:
			mask := make([]int64, total+len(feed))
			for i := range mask {
				mask[i] = 1
			}
			v, err = ort.NewTensor(ort.NewShape(1, int64(len(mask))), mask)
		case kindPositions:
			pos := make([]int64, len(feed))
			for i := range pos {
				pos[i] = int64(total + i)
			}
			v, err = ort.NewTensor(ort.NewShape(1, seq), pos)
		case kindPast:
			inputs[k] = past[k]
			if inputs[k] == nil {
				inputs[k] = d.empty[k]
			}
			continue
		case kindCacheBranch:
			inputs[k] = d.branchOff
			if total > 0 {
				inputs[k] = d.branchOn
			}
			continue
		case kindEncoderStates:
			inputs[k] = d.encStates
			continue
		case kindLogitsToKeep:
			inputs[k] = d.keepLogits
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create input %q: %w", d.inNames[k], err)
		}
		owned = append(owned, v)
		inputs[k] = v
	}
	outputs := make([]ort.Value, len(d.outNames))
	if err := sess.Run(ctx, inputs, outputs); err != nil {
		destroyAll(outputs)
		return nil, err
	}
	return outputs, nil
}

// dtypeName names a tensor element type for errors.
func dtypeName(t ort.TensorElementDataType) string {
	switch t {
	case ort.TensorElementDataTypeFloat:
		return "float32"
	case ort.TensorElementDataTypeFloat16:
		return "float16"
	case ort.TensorElementDataTypeBFloat16:
		return "bfloat16"
	case ort.TensorElementDataTypeDouble:
		return "float64"
	case ort.TensorElementDataTypeInt64:
		return "int64"
	case ort.TensorElementDataTypeInt32:
		return "int32"
	case ort.TensorElementDataTypeInt8:
		return "int8"
	case ort.TensorElementDataTypeUint8:
		return "uint8"
	case ort.TensorElementDataTypeBool:
		return "bool"
	}
	return fmt.Sprintf("element type %d", int(t))
}

// argmaxLast returns the id of the highest logit at the last position of
// logits [1, sequence, vocab].
func argmaxLast(v ort.Value) (int64, error) {
	t, ok := v.(*ort.Tensor[float32])
	if !ok {
		return 0, invalid("logits are %T; {Generate} reads float32 logits", v)
	}
	shape := t.GetShape()
	if len(shape) != 3 || shape[2] <= 0 || shape[1] <= 0 {
		return 0, fmt.Errorf("logits have shape %v; want [batch, sequence, vocab]", shape)
	}
	vocab := int(shape[2])
	data := t.GetData()
	last := data[int(shape[1]-1)*vocab : int(shape[1])*vocab]
	best := 0
	for i, x := range last {
		if x > last[best] {
			best = i
		}
	}
	return int64(best), nil
}

func destroyAll(vs []ort.Value) {
	for _, v := range vs {
		if v != nil {
			v.Destroy()
		}
	}
}

// generation benches LLM generation: a cold first generation, warm-up
// generations, then the measured ones, each greedy, Generate tokens from the
// same prompt.
func (b *bench) generation(ctx context.Context) (*report.Report, error) {
	cfg, rep, m := b.cfg, b.rep, b.model
	opt := decoderOptions{encoderTokens: cfg.EncoderTokens, seed: cfg.Seed}
	statesFrom := ""
	if cfg.EncoderPath != "" {
		cfg.progress("encoding: one run of %s", cfg.EncoderPath)
		enc, err := runEncoder(cfg.EncoderPath, cfg.EncoderShapes, cfg.Seed)
		if err != nil {
			return nil, err
		}
		opt.encoderStates = enc.states
		statesFrom = fmt.Sprintf("output of encoder %s on seeded %s (one run, %s)", filepath.Base(cfg.EncoderPath), enc.input, units.Duration(enc.took.Seconds()))
	}
	d, err := describeDecoder(cfg.ModelPath, m.inputs, m.outputs, opt)
	if err != nil {
		if opt.encoderStates != nil {
			opt.encoderStates.Destroy()
		}
		return nil, err
	}
	if d.encoderTokens > 0 && statesFrom == "" {
		statesFrom = "seeded values in [-1, 1)"
	}
	defer d.destroy()
	for i, k := range d.inKind {
		dims := d.inDims[i]
		switch k {
		case kindIDs, kindMask, kindPositions:
			rep.Model.Inputs[i].Shape = []int64{1, int64(cfg.PromptTokens)}
		case kindPast:
			rep.Model.Inputs[i].Shape = []int64{1, dims[1], 0, dims[3]}
		case kindCacheBranch:
			rep.Model.Inputs[i].Shape = []int64{1}
		case kindEncoderStates:
			rep.Model.Inputs[i].Shape = []int64{1, int64(d.encoderTokens), dims[2]}
		}
	}
	b.outNames = d.outNames
	// Deferred first: sessions opened before a failure close too.
	defer b.closeSessions()
	if err := b.openSessions(ctx, d.inNames); err != nil {
		return nil, err
	}
	sess := b.sessions[0]
	gens := instrument.NewGenerations(b.iopts...)
	prompt := d.prompt(cfg.PromptTokens, cfg.Seed)
	gen := func(ctx context.Context) (generation, error) {
		return d.generate(ctx, sess, gens, prompt, cfg.Generate)
	}
	cfg.progress("generating: %d-token prompt, %d tokens per generation", cfg.PromptTokens, cfg.Generate)

	b.firstRun = time.Now()
	if _, err := gen(ctx); err != nil {
		return nil, fmt.Errorf("first generation with model %q: %w", cfg.ModelPath, err)
	}
	rep.Session.FirstRunS = time.Since(b.firstRun).Seconds()
	if _, err := b.warmup(ctx, func(ctx context.Context) error { _, err := gen(ctx); return err }, rep.Session.FirstRunS, ""); err != nil {
		return nil, err
	}

	var (
		mu      sync.Mutex
		results []generation
	)
	exec := func(ctx context.Context, _, seq int) error {
		g, err := gen(ctx)
		if err == nil {
			mu.Lock()
			results = append(results, g)
			mu.Unlock()
		}
		if cfg.runHook != nil {
			cfg.runHook(seq)
		}
		return err
	}
	p := phase{scenario: SingleStream, workers: 1, requests: cfg.Runs, duration: cfg.Duration, observe: b.met.request}
	if cfg.Duration > 0 {
		p.requests = 0
	}
	cfg.progress("measuring: %s", report.Plural(max(cfg.Runs, 0), "generation"))
	res, hw, err := b.measured(ctx, p, exec)
	if err != nil {
		return nil, err
	}
	rep.Hardware = hw
	b.finishMain(res)
	rep.Generation = summarizeGenerations(d, cfg, results)
	rep.Generation.EncoderStates = statesFrom
	if w := res.wall.Seconds(); w > 0 {
		tokens := 0
		for _, g := range results {
			tokens += g.stats.OutputTokens
		}
		rep.Throughput.ItemsPerS = float64(tokens) / w
	}

	if n := cfg.ProfileRuns; n > 0 {
		// Each generation is Generate runs; the window takes the next n.
		left := n
		err := b.profilePass(ctx, func(ctx context.Context) error {
			if left <= 0 {
				return nil
			}
			left -= cfg.Generate
			_, err := gen(ctx)
			return err
		}, n)
		if err != nil {
			return nil, err
		}
	}
	return rep, b.closeSessions()
}

// summarizeGenerations builds the report's generation section.
func summarizeGenerations(d *decoder, cfg *Config, gs []generation) *report.Generation {
	out := &report.Generation{
		Generations: len(gs), PromptTokens: cfg.PromptTokens, OutputTokens: cfg.Generate, Batch: 1,
		Layers: d.layers, Heads: d.heads, HeadDim: d.headDim, Vocab: d.vocab,
		EncoderTokens: d.encoderTokens, KVCacheBytesPerToken: d.kvBytesPerToken,
	}
	var ttft, tpot, tps, dtps []float64
	for _, g := range gs {
		s := g.stats
		ttft = append(ttft, s.TimeToFirstToken.Seconds())
		if s.OutputTokens > 1 {
			tpot = append(tpot, s.TimePerOutputToken.Seconds())
			dtps = append(dtps, s.DecodeTokensPerSecond)
		}
		tps = append(tps, s.TokensPerSecond)
		out.KVCacheBytes = s.KVCacheBytes
	}
	out.TTFT = stats.Summarize(ttft)
	out.TPOT = stats.Summarize(tpot)
	out.TokensPerS = stats.Summarize(tps)
	out.DecodeTokensPerS = stats.Summarize(dtps)
	if len(gs) > 0 {
		out.GeneratedIDs = gs[0].ids
		out.KVCacheBytesPerStep = gs[0].kvBytes
	}
	return out
}
