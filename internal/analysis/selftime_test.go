package analysis

import (
	"math"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestRooflineUsesSelfTime: an If node's duration includes the nodes of
// the subgraph it ran, which are timeline entries of their own; the
// roofline's operator time counts each microsecond once. It catches
// statistics that sum durations (the If's 3 ms plus its 2 ms of subgraph).
func TestRooflineUsesSelfTime(t *testing.T) {
	ops := &report.Operators{Timeline: []report.NodeTiming{
		{Name: "If_0", OpType: "If", Provider: "CPUExecutionProvider", DurS: 3e-3, SubgraphS: 2e-3},
		{Name: "If_0_then_branch__Inline_0__/Conv", OpType: "Conv", Provider: "CPUExecutionProvider", DurS: 1.5e-3, Depth: 1},
		{Name: "If_0_then_branch__Inline_0__/Relu", OpType: "Relu", Provider: "CPUExecutionProvider", DurS: 0.5e-3, Depth: 1},
	}}
	r := Roofline(ops, fixedPeaks)
	if math.Abs(r.TimeS-3e-3) > 1e-12 {
		t.Errorf("roofline operator time %g s, want 3 ms (If self 1 ms + subgraph 2 ms)", r.TimeS)
	}
	for _, op := range r.Ops {
		if op.OpType == "If" && math.Abs(op.DurS-1e-3) > 1e-12 {
			t.Errorf("If time %g s, want its self time 1 ms", op.DurS)
		}
	}
	f := &Facts{Timeline: ops.Timeline}
	if got := f.opTime(); math.Abs(got-3e-3) > 1e-12 {
		t.Errorf("rules' operator time %g s, want 3 ms", got)
	}
}
