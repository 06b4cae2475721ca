package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// Severities of findings, most important first.
const (
	SeverityHigh   = "high"
	SeverityMedium = "medium"
	SeverityLow    = "low"
	SeverityInfo   = "info"
)

// Thresholds of the rules. They are documented in docs/report-schema.md.
const (
	// DominantShare: one op type taking at least this share of operator
	// time is dominant; at DominantHighShare the finding is high.
	DominantShare     = 0.40
	DominantHighShare = 0.60
	// FallbackHighShare: CPU-fallback nodes taking this share of operator
	// time make the finding high.
	FallbackHighShare = 0.20
	// MemcpyMediumShare: Memcpy nodes taking this share make the finding
	// medium (any Memcpy is reported).
	MemcpyMediumShare = 0.05
	// ImbalanceRatio: a node whose busiest pool thread ran this many times
	// the mean work is imbalanced; ImbalanceShare of operator time in such
	// nodes fires the rule.
	ImbalanceRatio = 1.5
	ImbalanceShare = 0.10
	// MemoryBoundShare: memory-bound op types (compute ops, not layout
	// conversions) taking this share fire the rule; MemoryBoundHighShare
	// makes it high. Op types under MemoryBoundMinShare are not listed.
	MemoryBoundShare     = 0.25
	MemoryBoundHighShare = 0.50
	MemoryBoundMinShare  = 0.02
	// OverheadRoofShare: a memory-bound node under this share of its
	// bandwidth roof, moving bytes that would take under OverheadIdealS
	// at it, is overhead-bound (BoundOverhead). OverheadShare:
	// overhead-bound op types (each at least MemoryBoundMinShare) taking
	// this share of operator time fire the overhead-bound rule;
	// OverheadHighShare makes it high.
	// OverheadIdealS bounds the time its bytes would take at the roof
	// (under the profiler's 1 µs resolution), so a large node that is
	// merely slow stays memory-bound.
	// DequantizeShare: DequantizeLinear nodes taking this share of
	// operator time fire the dequantize-weights rule;
	// DequantizeHighShare makes it high.
	DequantizeShare     = 0.10
	DequantizeHighShare = 0.25
	OverheadRoofShare   = 0.02
	OverheadIdealS      = 1e-6
	OverheadShare       = 0.10
	OverheadHighShare   = 0.40
	// ChainMinLen consecutive element-wise operators form a fusable chain.
	ChainMinLen = 3
	// LayoutShare: layout conversions (ReorderInput/Output, Transpose)
	// taking this share fire the rule; LayoutHighShare makes it high.
	LayoutShare     = 0.10
	LayoutHighShare = 0.25
	// JitterCV (std/mean) or JitterTail (p99/p50) fire the jitter rule,
	// with at least JitterMinSamples runs; JitterHighTail makes it high.
	JitterCV         = 0.10
	JitterTail       = 1.5
	JitterHighTail   = 3.0
	JitterMinSamples = 20
	// WarmupRatio: a first run this many times the steady p50 is a long
	// warm-up, as is a warm-up scenario that took WarmupRuns runs or more
	// to settle.
	WarmupRatio = 3.0
	WarmupRuns  = 10
	// WarmupExcessRuns: a slow settle counts only when the warm-up cost at
	// least this many steady runs' worth of extra time (otherwise the
	// steady-state test was merely delayed by noise).
	WarmupExcessRuns = 2.0
	// BatchGain: another batch size with this many times the items/s of
	// the one in use is better.
	BatchGain = 1.2
	// ThrottleMarginC: a temperature within this many °C of its limit,
	// or a CPU frequency drop of ThrottleFreqDrop, counts as throttling.
	ThrottleMarginC  = 5.0
	ThrottleFreqDrop = 0.15
	// GPUBusy: a GPU run whose GPU was busy less than this share of the
	// time is held back by something else.
	GPUBusy = 0.50
	// KnownTimeShare: a roofline covering less than this share of
	// operator time is reported as partial.
	KnownTimeShare = 0.80
)

// Rule is one check of the rule set.
type Rule struct {
	// ID names the rule in findings ("memory-bound-hot-ops").
	ID string
	// Doc says what fires it, with its thresholds.
	Doc   string
	check func(*Facts) *report.Finding
}

// Check runs the rule on f and returns its finding, or nil when it does not
// fire.
func (r Rule) Check(f *Facts) *report.Finding {
	fd := r.check(f)
	if fd != nil {
		fd.Rule = r.ID
	}
	return fd
}

// Rules returns the rule set, in the order the rules run.
func Rules() []Rule {
	return []Rule{
		{"dominant-op-type", fmt.Sprintf("one op type (not If, Loop or Scan) takes ≥ %.0f%% of operator time (high at ≥ %.0f%%)", 100*DominantShare, 100*DominantHighShare), ruleDominant},
		{"cpu-fallback", fmt.Sprintf("a non-CPU execution provider was requested and nodes ran on the CPU (medium at ≥ %.0f%%, high at ≥ %.0f%% of operator time)", 100*FallbackMediumShare, 100*FallbackHighShare), ruleFallback},
		{"partial-offload", fmt.Sprintf("several accelerator providers were requested and nodes ran on one other than the first (medium at ≥ %.0f%%, high at ≥ %.0f%% of operator time)", 100*FallbackMediumShare, 100*FallbackHighShare), rulePartialOffload},
		{"memcpy-transitions", fmt.Sprintf("Memcpy nodes copy tensors between providers (medium at ≥ %.0f%%, high at ≥ %.0f%% of operator time)", 100*MemcpyMediumShare, 100*MemcpyHighShare), ruleMemcpy},
		{"thread-imbalance", fmt.Sprintf("nodes whose busiest intra-op thread ran ≥ %.1f× the mean take ≥ %.0f%% of operator time", ImbalanceRatio, 100*ImbalanceShare), ruleImbalance},
		{"control-flow", fmt.Sprintf("If, Loop or Scan nodes take ≥ %.0f%% of operator time themselves, or ≥ %.0f%% with their subgraphs' nodes (high at ≥ %.0f%% of their own): names the op types and nodes inside and the control-flow nodes' own time", 100*ControlFlowOwnShare, 100*DominantShare, 100*ControlFlowHighShare), ruleControlFlow},
		{"qdq-pairs", fmt.Sprintf("QuantizeLinear → DequantizeLinear pairs that ONNX Runtime did not fuse into integer kernels take ≥ %.0f%% of operator time (high at ≥ %.0f%%)", 100*QDQShare, 100*QDQHighShare), ruleQDQ},
		{"dequantize-weights", fmt.Sprintf("DequantizeLinear nodes take ≥ %.0f%% of operator time (high at ≥ %.0f%%): quantized weights expanded to float at every run", 100*DequantizeShare, 100*DequantizeHighShare), ruleDequantize},
		{"overhead-bound-ops", fmt.Sprintf("op types whose nodes reach under %.0f%% of their memory roof and move bytes that would take under %g µs at it (overhead-bound; each ≥ %.0f%%) take ≥ %.0f%% of operator time together (high at ≥ %.0f%%)", 100*OverheadRoofShare, OverheadIdealS*1e6, 100*MemoryBoundMinShare, 100*OverheadShare, 100*OverheadHighShare), ruleOverheadBound},
		{"unfused-attention", fmt.Sprintf("no fused attention kernel ran and the nodes of the attention blocks (scopes with a MatMul → Softmax → MatMul; weight projections excluded) take ≥ %.0f%% of operator time (high at ≥ %.0f%%); with past_key_values inputs, the cache's Concat nodes are counted", 100*AttentionShare, 100*AttentionHighShare), ruleAttention},
		{"compute-far-below-peak", fmt.Sprintf("compute-bound nodes reaching under %.0f%% of peak FLOP/s take ≥ %.0f%% of operator time together (high at ≥ %.0f%%)", 100*ComputeLowRoof, 100*ComputeLowShare, 100*ComputeLowHighShare), ruleComputeLow},
		{"memory-bound-hot-ops", fmt.Sprintf("memory-bound op types (each ≥ %.0f%%) take ≥ %.0f%% of operator time together (high at ≥ %.0f%%); chains of ≥ %d consecutive element-wise nodes are listed", 100*MemoryBoundMinShare, 100*MemoryBoundShare, 100*MemoryBoundHighShare, ChainMinLen), ruleMemoryBound},
		{"layout-reorder", fmt.Sprintf("layout conversions (ReorderInput, ReorderOutput, Transpose) take ≥ %.0f%% of operator time (high at ≥ %.0f%%)", 100*LayoutShare, 100*LayoutHighShare), ruleLayout},
		{"high-jitter", fmt.Sprintf("with ≥ %d runs, std/mean ≥ %.2f or p99/p50 ≥ %.1f (high at p99/p50 ≥ %.0f)", JitterMinSamples, JitterCV, JitterTail, JitterHighTail), ruleJitter},
		{"long-warmup", fmt.Sprintf("the first run takes ≥ %.0f× the steady p50, or a warm-up scenario needed ≥ %d runs to settle and cost ≥ %.0f steady runs of extra time", WarmupRatio, WarmupRuns, WarmupExcessRuns), ruleWarmup},
		{"better-batch-size", fmt.Sprintf("a batch-size sweep found a batch size with ≥ %.1f× the items/s of the one in use", BatchGain), ruleBatch},
		{"thermal-throttling", fmt.Sprintf("throttling was active, a temperature came within %.0f °C of its limit, or the CPU frequency dropped ≥ %.0f%%", ThrottleMarginC, 100*ThrottleFreqDrop), ruleThrottle},
		{"gpu-underused", fmt.Sprintf("a GPU provider was requested and the GPU was busy < %.0f%% of the measured phase", 100*GPUBusy), ruleGPUIdle},
		{"partial-roofline", fmt.Sprintf("op types without a FLOP formula leave the roofline covering < %.0f%% of operator time", 100*KnownTimeShare), ruleUnknown},
	}
}

// Findings runs every rule on f and returns the findings that fired, most
// important first: by severity, then by impact.
func Findings(f *Facts) []report.Finding {
	out := []report.Finding{}
	for _, r := range Rules() {
		if fd := r.Check(f); fd != nil {
			out = append(out, *fd)
		}
	}
	rank := map[string]int{SeverityHigh: 0, SeverityMedium: 1, SeverityLow: 2, SeverityInfo: 3}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Severity] != rank[out[j].Severity] {
			return rank[out[i].Severity] < rank[out[j].Severity]
		}
		return out[i].Impact > out[j].Impact
	})
	return out
}

// opTime is the operator time of the profiled run.
func (f *Facts) opTime() float64 {
	var t float64
	for _, n := range f.Timeline {
		t += n.SelfS()
	}
	return t
}

func ev(name string, v float64, unit string) report.Evidence {
	return report.Evidence{Name: name, Value: round(v), Unit: unit}
}

func evText(name, text string) report.Evidence { return report.Evidence{Name: name, Text: text} }

// round keeps 4 significant digits, so evidence reads well in JSON.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

func ruleDominant(f *Facts) *report.Finding {
	total := f.opTime()
	if total <= 0 {
		return nil
	}
	// Shares by the one definition (self time over all profiled runs).
	// Control-flow nodes are left to their own rule: their self time is
	// the overhead of running subgraphs, not arithmetic to optimize.
	b := newShareBasis(f)
	nodes := map[string]int{}
	for _, n := range f.Timeline {
		nodes[n.OpType]++
	}
	top, share := "", 0.0
	for t := range nodes {
		if s := b.opType(t); !controlFlowOps[t] && (s > share || s == share && t < top) {
			top, share = t, s
		}
	}
	topT := b.tl[top]
	if share < DominantShare {
		return nil
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Title:    fmt.Sprintf("%s takes %s of operator time", top, units.Percent(share, 1)),
		Detail:   fmt.Sprintf("%d %s nodes a run take %s of operator time over the profiled runs (%s of the %s the last profiled run spent in operators).", nodes[top], top, units.Percent(share, 1), units.Duration(topT), units.Duration(total)),
		Evidence: []report.Evidence{ev("op_type_share", share, "1"), ev("op_type_time", topT, "s"), ev("nodes", float64(nodes[top]), "{node}"), evText("op_type", top)},
	}
	if share >= DominantHighShare {
		fd.Severity = SeverityHigh
	}
	bound, roof := "", (*float64)(nil)
	if f.Roofline != nil {
		for _, t := range f.Roofline.ByOpType {
			if t.OpType == top {
				bound, roof = t.Bound, t.RoofShare
				if t.FLOPsPerS != nil {
					fd.Evidence = append(fd.Evidence, ev("achieved_flops_per_s", *t.FLOPsPerS, "{flop}/s"))
				}
				break
			}
		}
	}
	if roof != nil {
		fd.Evidence = append(fd.Evidence, ev("roof_share", *roof, "1"), evText("bound", bound))
		fd.Detail += fmt.Sprintf(" It is %s-bound and reaches %s of its roof.", bound, units.Percent(*roof, 1))
	}
	switch {
	case bound == BoundCompute:
		fd.Recommendation = "Cut its arithmetic: quantize the model to int8 (ONNX Runtime's quantization tools; MatMul and Conv run on integer kernels), lower the input resolution or sequence length, or move it to an accelerator provider."
		if roof != nil && *roof < 0.5 {
			fd.Recommendation += fmt.Sprintf(" It reaches only %s of peak FLOP/s: check the intra-op thread count matches the physical cores.", units.Percent(*roof, 1))
		}
	case bound == BoundOverhead:
		fd.Recommendation = "Its nodes move too few bytes for memory or arithmetic to matter: the fixed cost of running each node bounds it. Run fewer of them (fold constant shape arithmetic with graph optimizations at ORT_ENABLE_ALL, export with static input shapes) or give each more work (a larger batch)."
	case bound == BoundMemory:
		fd.Recommendation = "It waits on memory: fuse it with its neighbours (ONNX Runtime's graph optimizations at level ORT_ENABLE_ALL), quantize to move fewer bytes, or keep tensors in one layout."
	default:
		fd.Recommendation = "Optimize this op type first: it bounds what any other change can gain."
	}
	return fd
}

// shapeOnly reports whether every output of a node is an int64 tensor: shape
// arithmetic, which ONNX Runtime keeps on the CPU.
func shapeOnly(n report.NodeTiming) bool {
	if len(n.OutputShapes) == 0 {
		return false
	}
	for _, o := range n.OutputShapes {
		if !strings.HasPrefix(o, "int64[") {
			return false
		}
	}
	return true
}

func ruleImbalance(f *Facts) *report.Finding {
	total := f.opTime()
	if total <= 0 {
		return nil
	}
	var t, worst float64
	n := 0
	worstName := ""
	for _, x := range f.Timeline {
		if x.Threads >= 2 && x.Imbalance >= ImbalanceRatio {
			t += x.SelfS()
			n++
			if x.Imbalance > worst {
				worst, worstName = x.Imbalance, x.Name
			}
		}
	}
	share := t / total
	if share < ImbalanceShare {
		return nil
	}
	return &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Title:  fmt.Sprintf("Uneven intra-op thread work in %d nodes (%s of operator time)", n, units.Percent(share, 1)),
		Detail: fmt.Sprintf("In these nodes the busiest thread of the intra-op pool ran ≥ %.1f× the mean work (worst %.1f×, node %s): the other threads waited.", ImbalanceRatio, worst, worstName),
		Evidence: []report.Evidence{ev("imbalanced_nodes", float64(n), "{node}"), ev("imbalanced_time_share", share, "1"),
			ev("worst_imbalance", worst, "1"), evText("worst_node", worstName), ev("intra_op_threads", float64(f.IntraOpThreads), "{thread}"), ev("logical_cpus", float64(f.LogicalCPUs), "{cpu}")},
		Recommendation: "Set the intra-op thread count to the number of physical cores (not hyper-threads) and keep other work off them; for small tensors fewer threads are often faster. Compare with --threads 1 and --threads <cores>.",
	}
}

// layoutOps are the layout conversions of the layout-reorder rule.
var layoutOps = setOf("ReorderInput", "ReorderOutput", "Transpose")

func ruleMemoryBound(f *Facts) *report.Finding {
	r := f.Roofline
	if r == nil || r.TimeS <= 0 || f.Peaks == nil {
		return nil
	}
	var share float64
	var hot []report.RooflineOpType
	for _, t := range r.ByOpType {
		if t.Bound == BoundMemory && !layoutOps[t.OpType] && !IsMemcpy(t.OpType) && t.Share >= MemoryBoundMinShare {
			share += t.Share
			hot = append(hot, t)
		}
	}
	if share < MemoryBoundShare {
		return nil
	}
	chains, chainNodes, chainT := elementwiseChains(f.Timeline)
	var names []string
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Evidence: []report.Evidence{ev("memory_bound_share", share, "1"), ev("ridge", f.Peaks.Ridge, "{flop}/By"), ev("peak_bytes_per_s", f.Peaks.BytesPerS, "By/s")},
	}
	for _, t := range hot {
		names = append(names, t.OpType)
		e := ev(t.OpType+".share", t.Share, "1")
		if t.Intensity != nil {
			e.Text = fmt.Sprintf("intensity %.3g FLOP/B, %s, %s of bandwidth roof", *t.Intensity, units.Rate(t.BytesPerS, "B/s"), pctPtr(t.RoofShare))
		}
		fd.Evidence = append(fd.Evidence, e)
	}
	fd.Title = fmt.Sprintf("Memory-bound op types take %s of operator time (%s)", units.Percent(share, 1), strings.Join(names, ", "))
	if ridges := levelRidges(f, hot); len(ridges) > 0 {
		// Each node was judged against the roof of the smallest memory
		// level its bytes fit in: quote those levels' ridge points.
		var parts []string
		for _, r := range ridges {
			parts = append(parts, fmt.Sprintf("%s %.2g", r.level, r.ridge))
			fd.Evidence = append(fd.Evidence, ev("ridge."+r.level, r.ridge, "{flop}/By"))
		}
		fd.Detail = fmt.Sprintf("These op types do fewer FLOP per byte moved than the ridge point of the memory level their data fits in (peak FLOP/s over that level's bandwidth: %s FLOP/byte), so memory bandwidth, not arithmetic, bounds them.", strings.Join(parts, ", "))
	} else {
		fd.Detail = fmt.Sprintf("These op types do less than %.2g FLOP per byte moved (the ridge point of this machine), so memory bandwidth, not arithmetic, bounds them.", f.Peaks.Ridge)
	}
	if share >= MemoryBoundHighShare {
		fd.Severity = SeverityHigh
	}
	rec := []string{}
	if chains > 0 {
		fd.Evidence = append(fd.Evidence, ev("elementwise_chains", float64(chains), "{chain}"), ev("elementwise_chain_nodes", float64(chainNodes), "{node}"), ev("elementwise_chain_share", chainT/f.opTime(), "1"))
		fd.Detail += fmt.Sprintf(" %d chains of %d or more consecutive element-wise nodes (%d nodes, %s of operator time) each read and write a whole tensor per node.", chains, ChainMinLen, chainNodes, units.Percent(chainT/f.opTime(), 1))
		rec = append(rec, "fuse the element-wise chains: export activations as single ops ONNX Runtime fuses into the preceding Conv or MatMul (HardSwish, HardSigmoid, Relu, Clip instead of Add+Clip+Mul+Div), or fold scale-and-shift Mul/Add pairs into the weights")
	} else {
		rec = append(rec, "fuse them with neighbouring operators (ONNX Runtime's graph optimizations at ORT_ENABLE_ALL; save the optimized model to check what fused)")
	}
	rec = append(rec, "quantize to int8 or use float16 to move fewer bytes", "keep tensors in one layout so no conversion sits between them")
	fd.Recommendation = capitalize(strings.Join(rec, "; ")) + "."
	return fd
}

// ruleDequantize fires when DequantizeLinear nodes take a large share of
// operator time: the model stores quantized (int8, uint8, int4) tensors
// but runs float kernels, so every run converts the weights back to float
// and moves them at float size as well (a QDQ model whose Q/DQ pairs ONNX
// Runtime did not fuse into integer kernels, or weight-only quantization).
func ruleDequantize(f *Facts) *report.Finding {
	r := f.Roofline
	if r == nil {
		return nil
	}
	var share, timeS float64
	var nodes, integer int
	for _, t := range r.ByOpType { // every provider's row
		switch {
		case t.OpType == "DequantizeLinear":
			share, timeS, nodes = share+t.Share, timeS+t.TimeS, nodes+t.Nodes
		case strings.HasPrefix(t.OpType, "QLinear"), strings.Contains(t.OpType, "Integer"), t.OpType == "MatMulNBits", t.OpType == "DynamicQuantizeMatMul":
			integer += t.Nodes
		}
	}
	if share < DequantizeShare {
		return nil
	}
	kernels := "has no integer kernels (QLinear*, *Integer, MatMulNBits)"
	if integer > 0 {
		kernels = "runs most of its arithmetic in float kernels"
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Title: fmt.Sprintf("Dequantizing weights takes %s of operator time (%s)", units.Percent(share, 1), report.Plural(nodes, "DequantizeLinear node")),
		Detail: fmt.Sprintf("The model stores quantized tensors but %s: each run converts them back to float (%s per profiled run in DequantizeLinear) before float kernels read them at float size, so the quantization saves file size, not time.",
			kernels, units.Duration(timeS)),
		Evidence:       []report.Evidence{ev("dequantize_share", share, "1"), ev("dequantize_nodes", float64(nodes), "{node}"), ev("integer_kernel_nodes", float64(integer), "{node}")},
		Recommendation: "Quantize so integer kernels run: ONNX Runtime's dynamic quantization (quantize_dynamic: MatMul becomes MatMulInteger) or its 4-bit weight quantization (MatMul becomes MatMulNBits, which dequantizes inside the kernel); or keep float weights and drop the DequantizeLinear nodes, trading file size for time.",
	}
	if share >= DequantizeHighShare {
		fd.Severity = SeverityHigh
	}
	if pairs := dequantizedWeights(f); len(pairs) > 0 {
		b := newShareBasis(f)
		var parts []string
		for _, p := range pairs {
			ps := b.node(p.dq) + b.node(p.mm)
			parts = append(parts, fmt.Sprintf("node %s expands %s into the float weight of %s (%s) every run: the pair takes %s of operator time",
				p.dq.Name, p.dq.InputShapes[0], p.mm.Name, p.mm.OpType, units.Percent(ps, 1)))
			fd.Evidence = append(fd.Evidence, ev("dequantized_weight."+p.mm.Name+".share", ps, "1"))
		}
		fd.Detail += " " + capitalize(strings.Join(parts, "; ")) + "."
		fd.Recommendation = fmt.Sprintf("The weight of %s is stored quantized and dequantized in full before a float kernel: quantize that MatMul for a kernel that reads the quantized weight itself (ONNX Runtime's MatMulNBits for 4-bit weights, which dequantizes block by block inside the kernel; dynamic quantization's MatMulInteger/DynamicQuantizeMatMul for 8-bit), or keep it float and drop the DequantizeLinear, trading file size for time.", pairs[0].mm.Name)
	}
	return fd
}

// dqPair is a DequantizeLinear of a stored weight and the matrix product
// that reads its output.
type dqPair struct{ dq, mm report.NodeTiming }

// dequantizedWeights pairs each DequantizeLinear of a stored tensor
// (parameter bytes) with the first later MatMul or Gemm whose weight input
// (the second) has its output's shape: the profile records shapes, not
// edges, and a weight of that exact shape read right after is the one.
func dequantizedWeights(f *Facts) []dqPair {
	var out []dqPair
	for i, n := range f.Timeline {
		if n.OpType != "DequantizeLinear" || !storedInput(n) || len(n.OutputShapes) != 1 {
			continue
		}
		for _, m := range f.Timeline[i+1:] {
			if (m.OpType == "MatMul" || m.OpType == "Gemm") && len(m.InputShapes) >= 2 && m.InputShapes[1] == n.OutputShapes[0] {
				out = append(out, dqPair{n, m})
				break
			}
		}
	}
	return out
}

// ruleOverheadBound fires when op types whose nodes move too few bytes
// for bandwidth to matter take a large share of operator time: their
// nodes reach a tiny share of their memory roof, so the fixed cost of
// each node bounds them, and fusing for bandwidth would not help; fewer
// nodes, or more work per node, would.
func ruleOverheadBound(f *Facts) *report.Finding {
	r := f.Roofline
	if r == nil || r.TimeS <= 0 || f.Peaks == nil {
		return nil
	}
	var share float64
	var hot []report.RooflineOpType
	nodes := 0
	for _, t := range r.ByOpType {
		if t.Bound == BoundOverhead && t.Share >= MemoryBoundMinShare {
			share += t.Share
			hot = append(hot, t)
			nodes += t.Nodes
		}
	}
	if share < OverheadShare {
		return nil
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Evidence: []report.Evidence{ev("overhead_bound_share", share, "1"), ev("overhead_roof_share", OverheadRoofShare, "1"), ev("overhead_bound_nodes", float64(nodes), "{node}")},
	}
	var names []string
	for _, t := range hot {
		names = append(names, t.OpType)
		e := ev(t.OpType+".share", t.Share, "1")
		e.Text = fmt.Sprintf("%s, %s per node, %s of its roof", report.Plural(t.Nodes, "node"), units.Duration(t.TimeS/float64(max(t.Nodes, 1))), pctPtr(t.RoofShare))
		fd.Evidence = append(fd.Evidence, e)
	}
	fd.Title = fmt.Sprintf("Per-node overhead bounds op types taking %s of operator time (%s)", units.Percent(share, 1), strings.Join(names, ", "))
	fd.Detail = fmt.Sprintf("Their %s reach under %s of their memory roof: they move so few bytes (under a microsecond's worth at the roof) that the fixed cost of running a node (kernel dispatch, output allocation, thread-pool handoff) takes their time, not memory bandwidth or arithmetic, so neither fusing for bandwidth nor quantizing speeds them up.",
		report.Plural(nodes, "node"), units.Percent(OverheadRoofShare, 0))
	if share >= OverheadHighShare {
		fd.Severity = SeverityHigh
	}
	fd.Recommendation = "Run fewer nodes: let ONNX Runtime fold constant shape arithmetic (graph optimization level ORT_ENABLE_ALL, or export with static input shapes so Shape, Gather, Squeeze and Unsqueeze chains become constants), and give each node more work (a larger batch pays the per-node cost once per batch)."
	return fd
}

// levelRidge is one memory level's ridge point: peak FLOP/s over the
// level's bandwidth roof.
type levelRidge struct {
	level string
	ridge float64
}

// levelRidges returns the ridge points of the memory levels the hot op
// types' nodes were compared with, nearest level first; nil when the
// peaks have one bandwidth roof only.
func levelRidges(f *Facts, hot []report.RooflineOpType) []levelRidge {
	roofs := newRoofSet(f.Peaks, f.IntraOpThreads)
	if !roofs.levels || roofs.flops() <= 0 {
		return nil
	}
	seen := map[string]bool{}
	for _, t := range hot {
		for _, l := range strings.Split(t.Roof, ", ") {
			if l != "" && l != LevelMemory {
				seen[l] = true
			}
		}
	}
	var out []levelRidge
	for l := range seen {
		if r, ok := roofs.measured(l, roofs.want); ok && r.BytesPerS > 0 {
			out = append(out, levelRidge{l, roofs.flops() / r.BytesPerS})
		}
	}
	sort.Slice(out, func(i, j int) bool { return levelRank(out[i].level) < levelRank(out[j].level) })
	return out
}

// elementwiseChains finds runs of at least ChainMinLen consecutive
// element-wise nodes in timeline order (layout conversions in between do
// not break a run, as they would vanish with fusion).
func elementwiseChains(tl []report.NodeTiming) (chains, nodes int, t float64) {
	run, runT := 0, 0.0
	flush := func() {
		if run >= ChainMinLen {
			chains++
			nodes += run
			t += runT
		}
		run, runT = 0, 0
	}
	for _, n := range tl {
		switch {
		case IsElementwise(n.OpType):
			run++
			runT += n.SelfS()
		case layoutOps[n.OpType] && n.OpType != "Transpose":
		default:
			flush()
		}
	}
	flush()
	return chains, nodes, t
}

func ruleLayout(f *Facts) *report.Finding {
	total := f.opTime()
	if total <= 0 {
		return nil
	}
	types := map[string]int{}
	var t float64
	n := 0
	for _, x := range f.Timeline {
		if layoutOps[x.OpType] {
			types[x.OpType]++
			t += x.SelfS()
			n++
		}
	}
	share := t / total
	if share < LayoutShare {
		return nil
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Title:    fmt.Sprintf("Layout conversions take %s of operator time (%d per run)", units.Percent(share, 1), n),
		Evidence: []report.Evidence{ev("layout_nodes", float64(n), "{node}"), ev("layout_time", t, "s"), ev("layout_time_share", share, "1"), evText("op_types", countList(types, 0))},
	}
	if share >= LayoutHighShare {
		fd.Severity = SeverityHigh
	}
	if types["ReorderInput"]+types["ReorderOutput"] > 0 {
		fd.Detail = fmt.Sprintf("%s: ONNX Runtime converts tensors between NCHW and its blocked NCHWc layout around every operator that cannot run blocked, so convolutions separated by such operators pay two full-tensor copies each.", countList(types, 0))
		fd.Recommendation = "Let convolutions chain in NCHWc: export activations as single operators ONNX Runtime fuses into the Conv (HardSwish, HardSigmoid, Relu, Clip) instead of Add/Clip/Mul/Div sequences, and fold Mul/Add scale-and-shift into the weights; also compare with graph optimization level ORT_ENABLE_EXTENDED, which skips the NCHWc transformer (ortel bench --opt-level extended, then ortel compare)."
	} else {
		fd.Detail = fmt.Sprintf("%s move whole tensors without arithmetic.", countList(types, 0))
		fd.Recommendation = "Export the model in the layout its consumers want, so the transposes fold away, or let ONNX Runtime's transpose optimizer (ORT_ENABLE_ALL) cancel them."
	}
	return fd
}

func ruleJitter(f *Facts) *report.Finding {
	l := f.Latency
	if l.Count < JitterMinSamples || l.Mean <= 0 || l.P50 <= 0 {
		return nil
	}
	cv := l.Std / l.Mean
	tail := l.P99 / l.P50
	if cv < JitterCV && tail < JitterTail {
		return nil
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: math.Min(1, (l.P99-l.P50)/l.P99),
		Title:  fmt.Sprintf("High latency jitter: p99 is %.2f× p50, std/mean %.2f", tail, cv),
		Detail: fmt.Sprintf("Over %d runs, p50 %s, p99 %s, max %s.", l.Count, units.Duration(l.P50), units.Duration(l.P99), units.Duration(l.Max)),
		Evidence: []report.Evidence{ev("cv", cv, "1"), ev("p99_over_p50", tail, "1"), ev("p50", l.P50, "s"), ev("p99", l.P99, "s"),
			ev("max", l.Max, "s"), ev("runs", float64(l.Count), "{run}")},
		Recommendation: "Find what competes for the CPU: other processes (see the hardware section's CPU utilization), more intra-op threads than free cores, or frequency scaling. Pin the process to dedicated cores (taskset), set intra-op threads to the cores it owns, and for a service disable thread spinning when cores are shared.",
	}
	if f.Outliers != nil {
		fd.Evidence = append(fd.Evidence, ev("outliers", float64(*f.Outliers), "{run}"))
	}
	if f.CPUUtilization != nil {
		fd.Evidence = append(fd.Evidence, ev("cpu_utilization", *f.CPUUtilization, "1"))
		if *f.CPUUtilization >= 0.9 {
			fd.Detail += fmt.Sprintf(" The host's CPUs were %s busy on average: other work competed with the model.", units.Percent(*f.CPUUtilization, 1))
		}
	}
	if tail >= JitterHighTail {
		fd.Severity = SeverityHigh
	}
	return fd
}

func ruleWarmup(f *Facts) *report.Finding {
	l := f.Latency
	ratio := 0.0
	if l.P50 > 0 {
		ratio = f.FirstRunS / l.P50
	}
	slowFirst := l.P50 > 0 && ratio >= WarmupRatio
	slowSettle := f.RunsToStable != nil && *f.RunsToStable >= WarmupRuns &&
		(f.WarmupExcessS == nil || *f.WarmupExcessS >= WarmupExcessRuns*l.P50)
	if !slowFirst && !slowSettle {
		return nil
	}
	fd := &report.Finding{
		Severity:       SeverityLow,
		Evidence:       []report.Evidence{ev("first_run", f.FirstRunS, "s"), ev("p50", l.P50, "s"), ev("first_run_over_p50", ratio, "1"), ev("session_creation", f.SessionCreationS, "s")},
		Recommendation: "Run one or more warm-up inferences at service start, before taking traffic, and keep sessions alive across requests; save the optimized model (SessionOptions optimized_model_filepath; ortel bench --save-optimized PATH) and load that to cut session creation; on GPUs, avoid exhaustive algorithm searches at first run.",
	}
	if l.P50 > 0 {
		fd.Impact = math.Min(1, (f.FirstRunS-l.P50)/f.FirstRunS)
	}
	if slowSettle {
		fd.Evidence = append(fd.Evidence, ev("runs_to_stable", float64(*f.RunsToStable), "{run}"))
		if f.WarmupExcessS != nil {
			fd.Evidence = append(fd.Evidence, ev("warmup_excess", *f.WarmupExcessS, "s"))
		}
	}
	switch {
	case slowFirst && slowSettle:
		fd.Title = fmt.Sprintf("Long warm-up: first run %.1f× p50, %d runs to settle", ratio, *f.RunsToStable)
	case slowFirst:
		fd.Title = fmt.Sprintf("Long warm-up: the first run takes %.1f× the steady p50", ratio)
	default:
		fd.Title = fmt.Sprintf("Long warm-up: latency took %d runs to settle", *f.RunsToStable)
	}
	fd.Detail = fmt.Sprintf("Session creation %s, first run %s, steady p50 %s.", units.Duration(f.SessionCreationS), units.Duration(f.FirstRunS), units.Duration(l.P50))
	if ratio >= 2*WarmupRatio || slowSettle && *f.RunsToStable >= 5*WarmupRuns {
		fd.Severity = SeverityMedium
	}
	return fd
}

func ruleBatch(f *Facts) *report.Finding {
	if len(f.Batches) < 2 {
		return nil
	}
	var cur *BatchPoint
	best := f.Batches[0]
	for i := range f.Batches {
		b := f.Batches[i]
		if b.Batch == f.Batch {
			cur = &f.Batches[i]
		}
		if b.ItemsPerS > best.ItemsPerS {
			best = b
		}
	}
	if f.BestBatch > 0 {
		// The sweep chose under its SLA; respect that choice.
		for _, b := range f.Batches {
			if b.Batch == f.BestBatch {
				best = b
			}
		}
	}
	if cur == nil || cur.ItemsPerS <= 0 || best.Batch == cur.Batch || best.ItemsPerS < BatchGain*cur.ItemsPerS {
		return nil
	}
	gain := best.ItemsPerS / cur.ItemsPerS
	return &report.Finding{
		Severity: SeverityMedium, Impact: math.Min(1, 1-1/gain),
		Title:  fmt.Sprintf("Batch size %d gives %.2f× the throughput of batch %d", best.Batch, gain, cur.Batch),
		Detail: fmt.Sprintf("Batch %d: %.1f items/s (p99 %s); batch %d: %.1f items/s (p99 %s).", cur.Batch, cur.ItemsPerS, units.Duration(cur.P99S), best.Batch, best.ItemsPerS, units.Duration(best.P99S)),
		Evidence: []report.Evidence{ev("batch", float64(cur.Batch), "{item}"), ev("items_per_s", cur.ItemsPerS, "{item}/s"), ev("best_batch", float64(best.Batch), "{item}"),
			ev("best_items_per_s", best.ItemsPerS, "{item}/s"), ev("best_p99", best.P99S, "s"), ev("gain", gain, "1")},
		Recommendation: fmt.Sprintf("If the latency budget allows a p99 of %s, batch requests up to %d (dynamic batching in the server) for %.2f× the throughput per machine.", units.Duration(best.P99S), best.Batch, gain),
	}
}

func ruleThrottle(f *Facts) *report.Finding {
	var reasons []string
	fd := &report.Finding{Severity: SeverityHigh, Impact: 1}
	if len(f.Throttle) > 0 {
		reasons = append(reasons, "throttling active: "+strings.Join(f.Throttle, ", "))
		fd.Evidence = append(fd.Evidence, evText("throttle", strings.Join(f.Throttle, ",")))
	}
	if m := f.TemperatureMarginC; m != nil && *m <= ThrottleMarginC {
		reasons = append(reasons, fmt.Sprintf("a temperature came within %.0f °C of its limit", *m))
		fd.Evidence = append(fd.Evidence, ev("temperature_margin", *m, "Cel"))
	}
	if d := f.CPUFrequencyDrop; d != nil && *d >= ThrottleFreqDrop {
		reasons = append(reasons, fmt.Sprintf("the CPU frequency dropped %s", units.Percent(*d, 1)))
		fd.Evidence = append(fd.Evidence, ev("cpu_frequency_drop", *d, "1"))
	}
	if len(reasons) == 0 {
		return nil
	}
	fd.Title = "Thermal or power throttling during the measured phase"
	fd.Detail = capitalize(strings.Join(reasons, "; ")) + ": latencies measured while throttled are not the hardware's steady capability."
	fd.Recommendation = "Check cooling and power limits (GPU power cap, laptop power profile, CPU governor); for benchmarks, let the machine cool and rerun; in production, size for the throttled rate."
	return fd
}

func ruleGPUIdle(f *Facts) *report.Finding {
	gpu := ""
	for _, p := range f.RequestedProviders {
		switch p {
		case "CUDAExecutionProvider", "TensorrtExecutionProvider", "ROCMExecutionProvider", "MIGraphXExecutionProvider", "DmlExecutionProvider":
			gpu = p
		}
		if gpu != "" {
			break
		}
	}
	if gpu == "" || f.GPUUtilization == nil || *f.GPUUtilization >= GPUBusy {
		return nil
	}
	u := *f.GPUUtilization
	return &report.Finding{
		Severity: SeverityHigh, Impact: 1 - u,
		Title:          fmt.Sprintf("The GPU was busy only %s of the time", units.Percent(u, 1)),
		Detail:         fmt.Sprintf("The session ran on %s with p50 latency %s, yet the GPU idled %s of the measured phase: the time goes elsewhere (CPU nodes, copies, launch overhead, the host loop).", gpu, units.Duration(f.Latency.P50), units.Percent(1-u, 1)),
		Evidence:       []report.Evidence{ev("gpu_utilization", u, "1"), ev("p50", f.Latency.P50, "s"), evText("provider", gpu)},
		Recommendation: "Look at the CPU-fallback and Memcpy findings first; then batch more work per run, bind inputs and outputs on the device (IO binding), and enable CUDA graphs for static shapes to cut launch overhead.",
	}
}

func ruleUnknown(f *Facts) *report.Finding {
	r := f.Roofline
	if r == nil || r.TimeS <= 0 || r.KnownTimeShare >= KnownTimeShare {
		return nil
	}
	return &report.Finding{
		Severity: SeverityInfo, Impact: 1 - r.KnownTimeShare,
		Title:  fmt.Sprintf("The roofline covers %s of operator time", units.Percent(r.KnownTimeShare, 1)),
		Detail: fmt.Sprintf("FLOPs are unknown for %s: the profile does not record what they need (a pre-packed weight, a kernel size, an interpolation mode), and ortel does not guess.", strings.Join(r.UnknownOpTypes, ", ")),
		Evidence: []report.Evidence{ev("known_time_share", r.KnownTimeShare, "1"), ev("known_nodes", float64(r.KnownNodes), "{node}"),
			ev("nodes", float64(r.Nodes), "{node}"), evText("unknown_op_types", strings.Join(r.UnknownOpTypes, ","))},
		Recommendation: "Read the compute- and memory-bound shares with that in mind; pass --peak-flops and --peak-bw only to change the roofs, not the FLOP counts.",
	}
}

func countList(m map[string]int, limit int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var parts []string
	for i, k := range keys {
		if limit > 0 && i == limit {
			parts = append(parts, fmt.Sprintf("%d more", len(keys)-limit))
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func pctPtr(v *float64) string {
	if v == nil {
		return "?"
	}
	return units.Percent(*v, 1)
}
