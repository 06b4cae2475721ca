package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// Thresholds of the unfused-attention rule (docs/report-schema.md).
const (
	// AttentionShare: the nodes of unfused attention blocks (everything
	// in the scope of a MatMul → Softmax → MatMul block but its weight
	// projections) taking this share of operator time fire the rule;
	// AttentionHighShare makes it high.
	AttentionShare     = 0.20
	AttentionHighShare = 0.40
)

// fusedAttentionOps are ONNX Runtime's fused attention kernels: a model
// that runs any of them had its attention fused.
var fusedAttentionOps = setOf("Attention", "MultiHeadAttention", "GroupQueryAttention", "DecoderMaskedMultiHeadAttention", "PackedAttention", "PackedMultiHeadAttention", "SparseAttention", "DecoderAttention", "QAttention")

// weightMatMulOps are the matrix products with a weight (the projections
// around attention, which stay separate or become the fused kernel's
// weights).
var weightMatMulOps = setOf("Gemm", "MatMulInteger", "MatMulIntegerToFloat", "DynamicQuantizeMatMul", "QLinearMatMul", "MatMulNBits", "MatMulBnb4", "DynamicQuantizeLinear")

// scopeOf is a node name's scope: "/model/decoder/layers.0/self_attn/"
// of "/model/decoder/layers.0/self_attn/Softmax"; "" without one.
func scopeOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		return name[:i+1]
	}
	return ""
}

// attentionBlocks returns the scopes of the timeline's unfused attention
// blocks: a scope holding a Softmax and at least two MatMul nodes
// without weights (scores = Q·Kᵀ, then scores·V) and no fused attention
// kernel, and the number of
// heads and the head size read from a score MatMul's [batch, heads,
// sequence, head size] input.
func attentionBlocks(tl []report.NodeTiming) (scopes []string, heads, headSize int64) {
	softmax, fused := map[string]bool{}, map[string]bool{}
	matmuls := map[string]int{}
	for _, n := range tl {
		sc := scopeOf(n.Name)
		if sc == "" {
			continue
		}
		switch {
		case fusedAttentionOps[n.OpType]:
			fused[sc] = true
		case n.OpType == "Softmax":
			softmax[sc] = true
		case (n.OpType == "MatMul" || n.OpType == "FusedMatMul") && n.ParameterSize == 0:
			matmuls[sc]++
			if heads == 0 && len(n.InputShapes) > 0 {
				if s, err := ParseShape(n.InputShapes[0]); err == nil && s.Rank() == 4 && s.Dim(1) > 1 {
					heads, headSize = s.Dim(1), s.Dim(3)
				}
			}
		}
	}
	for sc := range softmax {
		if matmuls[sc] >= 2 && !fused[sc] {
			scopes = append(scopes, sc)
		}
	}
	sort.Strings(scopes)
	return scopes, heads, headSize
}

// kvConcat reports whether n appends to a key/value cache: a float Concat
// of a rank-4 past (its sequence axis, -2, longer than 1) and the new
// step, along that axis.
func kvConcat(n report.NodeTiming) bool {
	if n.OpType != "Concat" || len(n.InputShapes) != 2 || len(n.OutputShapes) != 1 {
		return false
	}
	ins, err := parseShapes(n.InputShapes)
	if err != nil {
		return false
	}
	out, err := ParseShape(n.OutputShapes[0])
	if err != nil || out.Type != "float" && out.Type != "float16" || out.Rank() != 4 || ins[0].Rank() != 4 || ins[1].Rank() != 4 {
		return false
	}
	return ins[0].Dim(-2) > 1 && ins[0].Dim(-2)+ins[1].Dim(-2) == out.Dim(-2) && ins[0].Dim(-1) == out.Dim(-1)
}

// ruleAttention fires when attention runs as many small nodes (Reshape,
// Transpose, MatMul, Softmax, rotary Slice/Neg/Concat, cache Concat)
// instead of one fused kernel, and those nodes take a large share of
// operator time. It names the op types inside, the key/value cache's
// Concat nodes when the model has past_key_values inputs, and the
// transformer optimizer command that fuses them.
func ruleAttention(f *Facts) *report.Finding {
	scopes, heads, headSize := attentionBlocks(f.Timeline)
	if len(scopes) == 0 {
		return nil
	}
	b := newShareBasis(f)
	inScope := func(name string) bool {
		for _, sc := range scopes {
			if strings.HasPrefix(name, sc) {
				return true
			}
		}
		return false
	}
	var share, kvShare float64
	nodes, kv := 0, 0
	byType := map[string]float64{}
	for _, n := range f.Timeline {
		if !inScope(n.Name) || weightMatMulOps[n.OpType] || n.OpType == "MatMul" && n.ParameterSize > 0 {
			continue
		}
		s := b.node(n)
		share += s
		nodes++
		byType[n.OpType] += s
		if kvConcat(n) {
			kv++
			kvShare += s
		}
	}
	if share < AttentionShare {
		return nil
	}
	var parts []string
	for i, t := range sortedByValue(byType) {
		if i == ControlFlowTop {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", t, units.Percent(byType[t], 1)))
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Title: fmt.Sprintf("Unfused attention: %s run as %s taking %s of operator time", report.Plural(len(scopes), "attention block"), report.Plural(nodes, "node"), units.Percent(share, 1)),
		Detail: fmt.Sprintf("Each block (a MatMul → Softmax → MatMul in one scope, such as %s) runs as about %d separate nodes besides its weight projections: %s. Every node reads and writes its tensors and pays the per-node cost; ONNX Runtime's fused attention kernels (Attention, MultiHeadAttention, GroupQueryAttention) do the block in one.",
			scopes[0], nodes/len(scopes), strings.Join(parts, ", ")),
		Evidence: []report.Evidence{ev("attention_share", share, "1"), ev("attention_blocks", float64(len(scopes)), "{block}"), ev("attention_nodes", float64(nodes), "{node}")},
	}
	if share >= AttentionHighShare {
		fd.Severity = SeverityHigh
	}
	if heads > 0 {
		fd.Evidence = append(fd.Evidence, ev("heads", float64(heads), "{head}"), ev("head_size", float64(headSize), "1"))
	}
	rec := "Fuse the attention with ONNX Runtime's transformer optimizer (python -m onnxruntime.transformers.optimizer, the model type closest to the architecture: bert, bart, gpt2, t5"
	if heads > 0 {
		rec += fmt.Sprintf("; %d heads of %d, hidden size %d, read from the profile", heads, headSize, heads*headSize)
	}
	rec += ") and bench the result against this model."
	if past := pastInputs(f.InputNames); past > 0 {
		fd.Evidence = append(fd.Evidence, ev("kv_cache_inputs", float64(past), "{input}"), ev("kv_cache_concat_nodes", float64(kv), "{node}"), ev("kv_cache_concat_share", kvShare, "1"))
		fd.Detail += fmt.Sprintf(" The model takes a key/value cache (%s): %s per step copy the whole cache to append one position (%s of operator time at this cache length, growing with it).",
			report.Plural(past, "past_key_values input"), report.Plural(kv, "Concat node"), units.Percent(kvShare, 1))
		rec += " For the cache: a fused decoder kernel (GroupQueryAttention) appends in place to a pre-allocated cache buffer, and IO binding keeps the present outputs bound as the next step's past inputs instead of copying them out and back."
	}
	fd.Recommendation = rec
	return fd
}

// pastInputs counts the inputs of a key/value cache.
func pastInputs(names []string) int {
	n := 0
	for _, s := range names {
		if strings.HasPrefix(s, "past_key_values") || strings.HasPrefix(s, "past.") || strings.HasPrefix(s, "past_") {
			n++
		}
	}
	return n
}

// transformerModelType guesses the transformer optimizer's --model_type
// from the inputs: an encoder-decoder's decoder (encoder_hidden_states)
// is bart, a decoder with a cache gpt2, else bert.
func transformerModelType(names []string) string {
	for _, s := range names {
		if s == "encoder_hidden_states" {
			return "bart"
		}
	}
	if pastInputs(names) > 0 {
		return "gpt2"
	}
	return "bert"
}
