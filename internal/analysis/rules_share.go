package analysis

import "github.com/ortel-dev/ortel/internal/report"

// shareBasis gives nodes of the timeline run their share of operator time
// by the one share definition of the report (self time over all profiled
// runs, the top-operators table's): a node's share is its op type's
// share over all runs, split among the op type's nodes of the timeline
// run by their self time there. Exact when every run places its nodes
// alike; the timeline run's own shares when the report has no totals.
type shareBasis struct {
	runs map[string]float64 // op type -> share over all profiled runs
	tl   map[string]float64 // op type -> self time in the timeline run
	// meanS is an op type's mean self time per call over all runs.
	meanS map[string]float64
}

func newShareBasis(f *Facts) shareBasis {
	b := shareBasis{runs: map[string]float64{}, tl: map[string]float64{}, meanS: map[string]float64{}}
	for _, n := range f.Timeline {
		b.tl[n.OpType] += n.SelfS()
	}
	calls := map[string]int{}
	for _, t := range f.OpTypes {
		b.runs[t.OpType] += t.Share
		b.meanS[t.OpType] += t.TotalS
		calls[t.OpType] += t.Calls
	}
	for t, c := range calls {
		if c > 0 {
			b.meanS[t] /= float64(c)
		}
	}
	complete := len(f.OpTypes) > 0
	for t := range b.tl {
		if _, ok := b.runs[t]; !ok {
			complete = false
		}
	}
	if !complete {
		total := f.opTime()
		clear(b.runs)
		clear(b.meanS)
		for t, s := range b.tl {
			if total > 0 {
				b.runs[t] = s / total
			}
		}
	}
	return b
}

// node is n's share of operator time.
func (b shareBasis) node(n report.NodeTiming) float64 {
	if tl := b.tl[n.OpType]; tl > 0 {
		return b.runs[n.OpType] * n.SelfS() / tl
	}
	return 0
}

// opType is t's share of operator time.
func (b shareBasis) opType(t string) float64 { return b.runs[t] }
