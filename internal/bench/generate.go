package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"sync"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// Names of a decoder's inputs and outputs in the Hugging Face/Optimum ONNX
// convention that --generate drives.
const (
	inputIDs      = "input_ids"
	attentionMask = "attention_mask"
	positionIDs   = "position_ids"
	logitsName    = "logits"
)

var (
	pastRe    = regexp.MustCompile(`^past_key_values\.(\d+)\.(key|value)$`)
	presentRe = regexp.MustCompile(`^present\.(\d+)\.(key|value)$`)
)

// DefaultPromptTokens is the prompt length of --generate.
const DefaultPromptTokens = 32

// decoder describes a decoder-only language model following the
// input_ids / attention_mask / past_key_values.* convention, and holds what
// every generation reuses.
type decoder struct {
	layers, heads, headDim, vocab int

	inNames  []string // model order
	outNames []string
	inKind   []inputKind
	inLayer  []int       // for past inputs: the layer
	inIsKey  []bool      // for past inputs: key (true) or value
	outLayer []int       // for present outputs: the layer, else -1
	outIsKey []bool      // for present outputs: key or value
	logits   int         // index of logits among the outputs
	empty    []ort.Value // empty past tensors [1, H, 0, D], one per past input
}

type inputKind int

const (
	kindIDs inputKind = iota
	kindMask
	kindPositions
	kindPast
)

// describeDecoder checks that the model follows the convention and reads its
// sizes.
func describeDecoder(path string, ins, outs []ort.InputOutputInfo) (*decoder, error) {
	d := &decoder{logits: -1}
	layers := map[int]int{}
	hasIDs, hasMask := false, false
	for _, i := range ins {
		d.inNames = append(d.inNames, i.Name)
		layer, isKey := -1, false
		switch {
		case i.Name == inputIDs:
			d.inKind = append(d.inKind, kindIDs)
			hasIDs = true
		case i.Name == attentionMask:
			d.inKind = append(d.inKind, kindMask)
			hasMask = true
		case i.Name == positionIDs:
			d.inKind = append(d.inKind, kindPositions)
		default:
			m := pastRe.FindStringSubmatch(i.Name)
			if m == nil {
				return nil, fmt.Errorf("model %q: input %q is not one --generate can feed (it feeds input_ids, attention_mask, position_ids and past_key_values.<layer>.key/value)", path, i.Name)
			}
			layer, _ = strconv.Atoi(m[1])
			isKey = m[2] == "key"
			layers[layer]++
			d.inKind = append(d.inKind, kindPast)
			if len(i.Dimensions) != 4 || i.Dimensions[1] <= 0 || i.Dimensions[3] <= 0 {
				return nil, fmt.Errorf("model %q: input %q is declared %s; --generate needs [batch, heads, past_sequence, head_dim] with fixed heads and head_dim", path, i.Name, dimsText(i.Dimensions))
			}
			h, hd := int(i.Dimensions[1]), int(i.Dimensions[3])
			if d.heads == 0 {
				d.heads, d.headDim = h, hd
			} else if d.heads != h || d.headDim != hd {
				return nil, fmt.Errorf("model %q: input %q has %d heads of %d, unlike the other cache inputs (%d of %d)", path, i.Name, h, hd, d.heads, d.headDim)
			}
		}
		d.inLayer = append(d.inLayer, layer)
		d.inIsKey = append(d.inIsKey, isKey)
	}
	if !hasIDs || !hasMask || len(layers) == 0 {
		return nil, fmt.Errorf("model %q is not a decoder with a key/value cache: --generate needs inputs input_ids, attention_mask and past_key_values.<layer>.key/value", path)
	}
	for l, n := range layers {
		if n != 2 {
			return nil, fmt.Errorf("model %q: layer %d has %d of its past_key_values key and value inputs", path, l, n)
		}
	}
	d.layers = len(layers)
	presents := 0
	for k, o := range outs {
		d.outNames = append(d.outNames, o.Name)
		layer, isKey := -1, false
		if o.Name == logitsName {
			d.logits = k
			if len(o.Dimensions) == 3 && o.Dimensions[2] > 0 {
				d.vocab = int(o.Dimensions[2])
			}
		} else if m := presentRe.FindStringSubmatch(o.Name); m != nil {
			layer, _ = strconv.Atoi(m[1])
			isKey = m[2] == "key"
			presents++
		}
		d.outLayer = append(d.outLayer, layer)
		d.outIsKey = append(d.outIsKey, isKey)
	}
	if d.logits < 0 {
		return nil, fmt.Errorf("model %q has no output named logits", path)
	}
	if presents != 2*d.layers {
		return nil, fmt.Errorf("model %q: %d present.<layer>.key/value outputs for %d layers of past_key_values inputs", path, presents, d.layers)
	}
	if d.vocab == 0 {
		return nil, fmt.Errorf("model %q: output logits is declared %s; --generate needs a fixed vocabulary size as its last dimension", path, dimsText(outs[d.logits].Dimensions))
	}
	for k := range d.inNames {
		if d.inKind[k] != kindPast {
			d.empty = append(d.empty, nil)
			continue
		}
		t, err := ort.NewTensor(ort.NewShape(1, int64(d.heads), 0, int64(d.headDim)), []float32{})
		if err != nil {
			d.destroy()
			return nil, fmt.Errorf("create an empty cache tensor: %w", err)
		}
		d.empty = append(d.empty, t)
	}
	return d, nil
}

func (d *decoder) destroy() {
	for _, v := range d.empty {
		if v != nil {
			v.Destroy()
		}
	}
	d.empty = nil
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
}

// generate runs one greedy generation of n tokens from prompt: a prefill
// run over the whole prompt with empty caches, then one run per further
// token, each feeding the previous token and the previous run's present
// tensors as the past. Every run nests under the generation's prefill or
// decode span.
func (d *decoder) generate(ctx context.Context, sess *instrument.DynamicSession, gens *instrument.Generations, prompt []int64, n int) (generation, error) {
	ctx, g := gens.Start(ctx, len(prompt))
	var (
		past    = make([]ort.Value, len(d.inNames)) // the present tensors of the last run
		outputs []ort.Value
		ids     []int64
		err     error
	)
	freePast := func() {
		for k, v := range past {
			if v != nil {
				v.Destroy()
				past[k] = nil
			}
		}
	}
	defer freePast()
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
		ids = append(ids, tok)
		ctx = g.Token()
		if step == n-1 {
			g.SetKVCacheBytes(instrument.KVCacheBytes(d.outNames, outputs))
		}
		// The present tensors become the next step's past.
		freePast()
		for k, v := range outputs {
			if l := d.outLayer[k]; l >= 0 {
				past[d.pastIndex(l, d.outIsKey[k])] = v
			} else {
				v.Destroy()
			}
		}
		feed = []int64{tok}
	}
	st := g.End(err)
	if err != nil {
		return generation{}, err
	}
	return generation{stats: st, ids: ids}, nil
}

// pastIndex returns the input index of a layer's past key or value.
func (d *decoder) pastIndex(layer int, key bool) int {
	for k := range d.inNames {
		if d.inKind[k] == kindPast && d.inLayer[k] == layer && d.inIsKey[k] == key {
			return k
		}
	}
	return -1
}

// step runs the model on feed (the new tokens), with past holding the
// cache of the total tokens before them (nil entries: empty).
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

// argmaxLast returns the id of the highest logit at the last position of
// logits [1, sequence, vocab].
func argmaxLast(v ort.Value) (int64, error) {
	t, ok := v.(*ort.Tensor[float32])
	if !ok {
		return 0, fmt.Errorf("logits are %T; --generate reads float32 logits", v)
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
	d, err := describeDecoder(cfg.ModelPath, m.inputs, m.outputs)
	if err != nil {
		return nil, err
	}
	defer d.destroy()
	for i, k := range d.inKind {
		switch k {
		case kindIDs, kindMask, kindPositions:
			rep.Model.Inputs[i].Shape = []int64{1, int64(cfg.PromptTokens)}
		case kindPast:
			rep.Model.Inputs[i].Shape = []int64{1, int64(d.heads), 0, int64(d.headDim)}
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
	cfg.progress("measuring: %s", plural(max(cfg.Runs, 0), "generation"))
	res, hw, err := b.measured(ctx, p, exec)
	if err != nil {
		return nil, err
	}
	rep.Hardware = hw
	b.finishMain(res)
	rep.Generation = summarizeGenerations(d, cfg, results)
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
	}
	return out
}
