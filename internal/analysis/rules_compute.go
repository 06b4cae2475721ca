package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// Thresholds of the compute-far-below-peak rule (docs/report-schema.md).
const (
	// ComputeLowRoof: a compute-bound node under this share of the
	// compute roof is far below peak. The roof is a large float MatMul
	// measured on this machine, which ONNX Runtime's GEMM kernels reach
	// within a factor of two or three on shapes of useful size (convs
	// through im2col, depthwise, short K land at 15-50% here); a node ten
	// times slower than its arithmetic explains is held back by
	// something else: threads waiting, a layout conversion or packing
	// inside the kernel, other processes on its cores.
	ComputeLowRoof = 0.10
	// ComputeLowShare: such nodes taking this share of operator time fire
	// the rule; ComputeLowHighShare makes it high.
	ComputeLowShare     = 0.10
	ComputeLowHighShare = 0.30
)

// ruleComputeLow fires when nodes the roofline calls compute-bound reach
// a small share of peak FLOP/s and take a large share of operator time.
// Their bytes move far below the memory roof too (their intensity is
// above the ridge), so neither roof explains their time: the fix is in
// how they run, not in the model's arithmetic.
func ruleComputeLow(f *Facts) *report.Finding {
	r := f.Roofline
	if r == nil || f.Peaks == nil || len(r.Ops) != len(f.Timeline) {
		return nil
	}
	b := newShareBasis(f)
	type low struct {
		n     report.NodeTiming
		op    report.RooflineOp
		share float64
	}
	var lows []low
	var share float64
	types := map[string]int{}
	for i, op := range r.Ops {
		if op.Bound != BoundCompute || op.RoofShare == nil || *op.RoofShare >= ComputeLowRoof {
			continue
		}
		s := b.node(f.Timeline[i])
		lows = append(lows, low{f.Timeline[i], op, s})
		share += s
		types[op.OpType]++
	}
	if share < ComputeLowShare {
		return nil
	}
	sort.SliceStable(lows, func(i, j int) bool { return lows[i].share > lows[j].share })
	var parts []string
	var bwShare float64
	for i, l := range lows {
		if f.Peaks.BytesPerS > 0 {
			bwShare = max(bwShare, l.op.BytesPerS/f.Peaks.BytesPerS)
		}
		if i < 3 {
			parts = append(parts, fmt.Sprintf("%s (%s, %s) %s at %s of peak", l.n.Name, l.n.OpType, shapeBrief(l.n), units.Percent(l.share, 1), units.Percent(*l.op.RoofShare, 1)))
		}
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: share,
		Title: fmt.Sprintf("Compute-bound nodes far below peak FLOP/s take %s of operator time (%s under %s of the compute roof)", units.Percent(share, 1), countList(types, 0), units.Percent(ComputeLowRoof, 0)),
		Evidence: []report.Evidence{ev("compute_low_share", share, "1"), ev("compute_low_nodes", float64(len(lows)), "{node}"), ev("compute_low_roof", ComputeLowRoof, "1"),
			ev("peak_flops_per_s", f.Peaks.FLOPsPerS, "{flop}/s"), ev("max_dram_roof_share", bwShare, "1")},
	}
	if share >= ComputeLowHighShare {
		fd.Severity = SeverityHigh
	}
	fd.Detail = fmt.Sprintf("These nodes do enough arithmetic per byte to be bound by FLOP/s, yet reach under %s of the %s this machine's MatMul peak gives, and move their bytes at under %s of the DRAM roof: neither arithmetic nor memory explains their time. Largest: %s.",
		units.Percent(ComputeLowRoof, 0), units.Rate(f.Peaks.FLOPsPerS, "FLOP/s"), units.Percent(max(bwShare, 0.001), 1), strings.Join(parts, "; "))
	rec := "Find what holds them back, one change at a time: the intra-op thread count (more threads than free cores wait on each other; on a busy host fewer are faster), the graph optimization level (ORT_ENABLE_ALL converts convolutions to the blocked NCHWc layout, EXTENDED does not), and the execution provider; the tuning sweep measures the first two."
	if f.CPUUtilization != nil && *f.CPUUtilization >= 0.9 {
		rec += fmt.Sprintf(" The host's CPUs were %s busy during the run: measure again on idle cores before changing the model.", units.Percent(*f.CPUUtilization, 0))
	}
	fd.Recommendation = rec
	return fd
}

// shapeBrief is a node's first input and output shapes, "float[1,16,320,320]
// -> float[1,32,320,320]".
func shapeBrief(n report.NodeTiming) string {
	in, out := "", ""
	if len(n.InputShapes) > 0 {
		in = n.InputShapes[0]
	}
	if len(n.OutputShapes) > 0 {
		out = n.OutputShapes[0]
	}
	return in + " → " + out
}
