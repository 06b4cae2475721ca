package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// Severity thresholds of the cpu-fallback and memcpy-transitions rules
// beyond those in rules.go (FallbackHighShare, MemcpyMediumShare).
const (
	// FallbackMediumShare: CPU-fallback nodes taking this share of
	// operator time make the finding medium (below it, low).
	FallbackMediumShare = 0.05
	// MemcpyHighShare: memory copies taking this share of operator time
	// make the finding high.
	MemcpyHighShare = 0.20
)

// ruleFallback fires when a provider other than the CPU was requested and
// nodes (not copies, not shape arithmetic) ran on the CPU.
func ruleFallback(f *Facts) *report.Finding {
	p := Placement(f.RequestedProviders, f.Timeline)
	if p == nil || p.Fallback == nil || p.Fallback.Nodes == 0 {
		return nil
	}
	fb := p.Fallback
	accel := accelerators(f.RequestedProviders)
	ops := make([]string, 0, len(fb.ByOpType))
	for i, o := range fb.ByOpType {
		if i == 8 {
			ops = append(ops, fmt.Sprintf("… %d more", len(fb.ByOpType)-8))
			break
		}
		ops = append(ops, fmt.Sprintf("%s ×%d (%s)", o.OpType, o.Nodes, units.Duration(o.TimeS)))
	}
	all := make([]string, len(fb.ByOpType))
	for i, o := range fb.ByOpType {
		all[i] = fmt.Sprintf("%s:%d", o.OpType, o.Nodes)
	}
	detail := fmt.Sprintf("The session asked for %s, but %s ran on CPUExecutionProvider, %s of operator time: %s.",
		strings.Join(accel, ", "), report.Plural(fb.Nodes, "node"), units.Duration(fb.TimeS), strings.Join(ops, ", "))
	if fb.ShapeNodes > 0 {
		detail += fmt.Sprintf(" Shape arithmetic (nodes with only int64 outputs), which ONNX Runtime keeps on the CPU on purpose, is not counted: %s.", report.Plural(fb.ShapeNodes, "node"))
	}
	fd := &report.Finding{
		Severity: SeverityLow, Impact: fb.Share,
		Title:  fmt.Sprintf("%d of %d nodes fell back to the CPU (%s of operator time)", fb.Nodes, p.Nodes, units.Percent(fb.Share, 1)),
		Detail: detail,
		Evidence: []report.Evidence{ev("cpu_nodes", float64(fb.Nodes), "{node}"), ev("nodes", float64(p.Nodes), "{node}"),
			ev("cpu_time_share", fb.Share, "1"), ev("cpu_time", fb.TimeS, "s"), evText("op_types", strings.Join(all, ",")),
			evText("requested", strings.Join(f.RequestedProviders, ","))},
		Recommendation: fmt.Sprintf("Check why %s does not take these op types (an unsupported opset, data type or attribute; ONNX Runtime's verbose log names the reason per node) and replace them by supported equivalents, or upgrade the provider; each fallback also costs a copy between devices.", accel[0]),
	}
	fd.Severity = severityByShare(fb.Share, FallbackMediumShare, FallbackHighShare)
	return fd
}

// severityByShare is high at a share of operator time of high or more,
// medium at medium or more, else low.
func severityByShare(share, medium, high float64) string {
	switch {
	case share >= high:
		return SeverityHigh
	case share >= medium:
		return SeverityMedium
	}
	return SeverityLow
}

// ruleMemcpy fires when the run has memory-copy nodes between devices.
func ruleMemcpy(f *Facts) *report.Finding {
	p := Placement(f.RequestedProviders, f.Timeline)
	if p == nil || p.Copies.Nodes == 0 {
		return nil
	}
	c := p.Copies
	kinds := make([]string, 0, len(c.ByKind))
	counts := map[string]int{}
	for _, k := range c.ByKind {
		kinds = append(kinds, fmt.Sprintf("%d %s (%s, %s, %s)", k.Nodes, k.OpType, strings.ReplaceAll(k.Direction, "_", " "), units.Bytes(k.Bytes), units.Duration(k.TimeS)))
		counts[k.OpType] += k.Nodes
	}
	detail := fmt.Sprintf("Per run, %s copy %s between host and device memory: %s.", report.Plural(c.Nodes, "Memcpy node"), units.Bytes(c.Bytes), strings.Join(kinds, "; "))
	if c.UnknownBytesNodes > 0 {
		detail += fmt.Sprintf(" The profile gives no size for %d of them.", c.UnknownBytesNodes)
	}
	evs := []report.Evidence{ev("memcpy_nodes", float64(c.Nodes), "{node}"), ev("memcpy_time", c.TimeS, "s"), ev("memcpy_time_share", c.Share, "1"),
		ev("memcpy_bytes", float64(c.Bytes), "By"), evText("op_types", countList(counts, 0))}
	if c.TimeS > 0 && c.Bytes > 0 {
		evs = append(evs, ev("memcpy_rate", float64(c.Bytes)/c.TimeS, "By/s"))
	}
	// ONNX Runtime inserts Memcpy nodes only where a tensor crosses from
	// one provider to another inside the graph; it copies the model's own
	// inputs and outputs outside the graph, without a node.
	rec := "Each Memcpy node sits where a tensor crosses between the CPU and the device inside the graph"
	if p.Fallback != nil && p.Fallback.Nodes > 0 {
		rec += ": make the nodes that fell back to the CPU run on the requested provider (see the cpu-fallback finding), which removes the copies on both sides of them"
	} else {
		rec += ": look at the nodes each copy feeds or drains (CPU-only inputs such as shape tensors) and keep them on one device, for example by fixing the dynamic dimensions so ONNX Runtime folds the shape computation"
	}
	rec += "."
	if slices.Contains(f.RequestedProviders, "CUDAExecutionProvider") {
		rec += " Memcpy nodes also keep the CUDA provider from capturing a CUDA graph."
	}
	rec += " The copies of the model's own inputs and outputs are not nodes: bind them in device memory (IO binding) to avoid those too."
	fd := &report.Finding{
		Severity: SeverityLow, Impact: c.Share,
		Title:          fmt.Sprintf("%d Memcpy transitions between providers per run (%s of operator time)", c.Nodes, units.Percent(c.Share, 1)),
		Detail:         detail,
		Evidence:       evs,
		Recommendation: rec,
	}
	fd.Severity = severityByShare(c.Share, MemcpyMediumShare, MemcpyHighShare)
	return fd
}

// rulePartialOffload fires when several accelerator providers were
// requested and nodes ran on one other than the first: the preferred
// provider (TensorRT, typically) did not take them, and ONNX Runtime gave
// them to the next (CUDA). Memcpy nodes and nodes without a recorded
// provider are not counted.
func rulePartialOffload(f *Facts) *report.Finding {
	accel := accelerators(f.RequestedProviders)
	p := Placement(f.RequestedProviders, f.Timeline)
	if len(accel) < 2 || p == nil || p.TimeS <= 0 {
		return nil
	}
	first, next := accel[0], accel[1:]
	offloaded := func(n report.NodeTiming) bool { return slices.Contains(next, n.Provider) && !IsMemcpy(n.OpType) }
	ops := byOpType(f.Timeline, offloaded, func(t float64) float64 { return t / p.TimeS })
	if len(ops) == 0 {
		return nil
	}
	var nodes int
	var timeS float64
	var listed, counts []string
	for i, o := range ops {
		nodes += o.Nodes
		timeS += o.TimeS
		counts = append(counts, fmt.Sprintf("%d %s", o.Nodes, o.OpType))
		switch {
		case i < 8:
			listed = append(listed, fmt.Sprintf("%s ×%d (%s)", o.OpType, o.Nodes, units.Duration(o.TimeS)))
		case i == 8:
			listed = append(listed, fmt.Sprintf("… %d more", len(ops)-8))
		}
	}
	var providers []string
	for _, n := range f.Timeline {
		if offloaded(n) && !slices.Contains(providers, n.Provider) {
			providers = append(providers, n.Provider)
		}
	}
	share := timeS / p.TimeS
	return &report.Finding{
		Severity: severityByShare(share, FallbackMediumShare, FallbackHighShare), Impact: share,
		Title: fmt.Sprintf("%d of %d nodes ran on %s instead of %s (%s of operator time)", nodes, p.Nodes,
			strings.Join(providers, " and "), first, units.Percent(share, 1)),
		Detail: fmt.Sprintf("The session asked for %s first, but it did not take these nodes, and ONNX Runtime gave them to the next provider requested: %s. Each boundary between the two splits the work into smaller pieces (for TensorRT, more and smaller engines).",
			first, strings.Join(listed, ", ")),
		Evidence: []report.Evidence{ev("offloaded_nodes", float64(nodes), "{node}"), ev("nodes", float64(p.Nodes), "{node}"),
			ev("offloaded_time_share", share, "1"), ev("offloaded_time", timeS, "s"), evText("providers", strings.Join(providers, ",")),
			evText("op_types", strings.Join(counts, ", ")), evText("requested", strings.Join(f.RequestedProviders, ","))},
		Recommendation: fmt.Sprintf("Read %s's verbose log for why it rejected these nodes (an unsupported op type, data type or dynamic shape; for TensorRT also subgraphs below trt_min_subgraph_size), then replace them by supported equivalents, give static or bounded shapes, or upgrade the provider. If the next provider runs them as fast, this costs only the boundaries.", first),
	}
}
