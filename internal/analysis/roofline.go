package analysis

import (
	"sort"

	"github.com/ortel-dev/ortel/internal/report"
)

// Bound values of report.RooflinePoint.
const (
	BoundCompute = "compute"
	BoundMemory  = "memory"
	BoundUnknown = "unknown"
	// BoundOverhead: a memory-bound node under OverheadRoofShare of its
	// roof whose bytes would take under OverheadIdealS at it; it moves so
	// few bytes that the fixed cost of running a node
	// (kernel dispatch, allocation, thread-pool handoff) bounds it, not
	// bandwidth.
	BoundOverhead = "overhead"
)

// Roofline computes the per-operator roofline of the profiled run in ops
// (its Timeline) for a model run on ONNX Runtime's default thread count;
// see RooflineThreads.
func Roofline(ops *report.Operators, peaks *report.Peaks) *report.Roofline {
	return RooflineThreads(ops, peaks, 0)
}

// RooflineThreads computes the per-operator roofline of the profiled run in
// ops (its Timeline), for a model that ran on threads intra-op threads (0:
// ONNX Runtime's default): each operator's FLOPs (OperatorFLOPs), bytes
// (activation + parameter + output sizes), arithmetic intensity, achieved
// FLOP/s and bytes/s and, when peaks is not nil, the bandwidth roof it is
// compared with (the smallest memory level of peaks.Levels its bytes fit
// in, measured on the model's thread count; peaks.BytesPerS when there are
// no levels), whether it is compute- or memory-bound under that roof, which
// share of its roof it reached and, when above it, why (AboveRoof). It
// returns nil when ops has no timeline.
func RooflineThreads(ops *report.Operators, peaks *report.Peaks, threads int) *report.Roofline {
	if ops == nil || len(ops.Timeline) == 0 {
		return nil
	}
	roofs := newRoofSet(peaks, threads)
	r := &report.Roofline{Nodes: len(ops.Timeline), Ops: make([]report.RooflineOp, 0, len(ops.Timeline))}
	type agg struct {
		t          report.RooflineOpType
		knownFLOPs float64
		knownBytes float64
		knownTime  float64
		known      int
		// placed: the nodes with a roof share; ideal is the time they
		// would take at their roofs; boundTime the placed time per bound.
		placedTime, ideal float64
		boundTime         map[string]float64
		roofs             []report.BandwidthRoof
		above             []aboveReason
	}
	byType := map[[2]string]*agg{}
	var order [][2]string
	unknownTypes := map[string]bool{}
	var knownTime float64
	for _, n := range ops.Timeline {
		w := OperatorFLOPs(n.OpType, n.InputShapes, n.OutputShapes)
		bytes := float64(n.ActivationSize + n.ParameterSize + n.OutputSize)
		self := n.SelfS() // a node's own time: its subgraph's nodes are timeline entries of their own
		op := report.RooflineOp{Name: n.Name, OpType: n.OpType, Provider: n.Provider, DurS: self, Class: w.Class}
		var f *float64
		if w.Known {
			f = ptr(w.FLOPs)
			r.KnownNodes++
			r.FLOPs += w.FLOPs
			knownTime += self
		} else {
			op.Unknown = w.Reason
			unknownTypes[n.OpType] = true
		}
		roof, hasRoof := roofs.roofFor(bytes)
		op.RooflinePoint = point(f, bytes, self, roofs.flops(), roof.BytesPerS)
		var why aboveReason
		if hasRoof {
			op.Roof, op.RoofBytesPerS = roof.Level, roof.BytesPerS
			if roofs.levels {
				op.RoofThreads = intPtr(roof.Threads)
			}
			if op.RoofShare != nil && *op.RoofShare > 1 {
				why = roofs.explain(op.RooflinePoint, self, roof)
				op.AboveRoof, op.AboveReason = why.text, aboveLabels[why.kind]
			}
		}
		r.Ops = append(r.Ops, op)
		r.TimeS += self
		r.Bytes += bytes

		key := [2]string{n.OpType, n.Provider}
		a := byType[key]
		if a == nil {
			a = &agg{t: report.RooflineOpType{OpType: n.OpType, Provider: n.Provider}, boundTime: map[string]float64{}}
			byType[key] = a
			order = append(order, key)
		}
		a.t.Nodes++
		a.t.TimeS += self
		a.t.Bytes += bytes
		if w.Known {
			a.known++
			a.knownFLOPs += w.FLOPs
			a.knownBytes += bytes
			a.knownTime += self
		} else {
			a.t.UnknownNodes++
		}
		if hasRoof {
			a.roofs = append(a.roofs, roof)
		}
		if op.RoofShare != nil {
			a.placedTime += self
			a.ideal += self * *op.RoofShare
			a.boundTime[op.Bound] += self
		}
		if why.kind != "" {
			a.above = append(a.above, why)
		}
	}
	if r.TimeS > 0 {
		r.KnownTimeShare = knownTime / r.TimeS
	}
	for t := range unknownTypes {
		r.UnknownOpTypes = append(r.UnknownOpTypes, t)
	}
	sort.Strings(r.UnknownOpTypes)
	// One share definition in every table: an op type's self time over
	// all profiled runs, of all operators' (the top-operators table's),
	// rather than over the one run the timeline holds (VAD's Squeeze was
	// 22.3% there and 2.9% here when one run's Squeeze nodes were slow).
	// A report whose totals miss an op type of the timeline (a hand-made
	// one) keeps the one run's shares, all of them.
	runsShare := map[[2]string]float64{}
	for _, t := range ops.ByType {
		runsShare[[2]string{t.OpType, t.Provider}] = t.Share
	}
	for _, key := range order {
		if _, ok := runsShare[key]; !ok {
			runsShare = nil
			break
		}
	}
	for _, key := range order {
		a := byType[key]
		t := a.t
		if sh, ok := runsShare[key]; ok {
			t.Share = sh
		} else if r.TimeS > 0 {
			t.Share = t.TimeS / r.TimeS
		}
		p := report.RooflinePoint{Bytes: t.Bytes, Bound: BoundUnknown}
		if t.TimeS > 0 {
			p.BytesPerS = t.Bytes / t.TimeS
		}
		if a.known > 0 {
			p.FLOPs = ptr(a.knownFLOPs)
			if a.knownBytes > 0 {
				p.Intensity = ptr(a.knownFLOPs / a.knownBytes)
			}
			if a.knownTime > 0 {
				p.FLOPsPerS = ptr(a.knownFLOPs / a.knownTime)
			}
		}
		if a.placedTime > 0 {
			// The time the placed nodes would take at their roofs over the
			// time they took: a node's share weighted by its time.
			p.RoofShare = ptr(a.ideal / a.placedTime)
			p.Bound = majorityBound(a.boundTime)
		}
		p.RoofPlacement = typePlacement(a.roofs)
		if len(a.above) > 0 {
			p.AboveRoof = summarizeAbove(a.above, a.t.Nodes)
		}
		t.RooflinePoint = p
		r.ByOpType = append(r.ByOpType, t)
	}
	sort.SliceStable(r.ByOpType, func(i, j int) bool { return r.ByOpType[i].Share > r.ByOpType[j].Share })
	return r
}

// point places work that took dur on the roofline under a compute roof of
// peakFLOPs and a bandwidth roof of roofBW (no roof when either is zero).
func point(flops *float64, bytes, dur, peakFLOPs, roofBW float64) report.RooflinePoint {
	p := report.RooflinePoint{FLOPs: flops, Bytes: bytes, Bound: BoundUnknown}
	if dur > 0 {
		p.BytesPerS = bytes / dur
	}
	if flops == nil {
		return p
	}
	if bytes > 0 {
		p.Intensity = ptr(*flops / bytes)
	}
	if dur > 0 {
		p.FLOPsPerS = ptr(*flops / dur)
	}
	if peakFLOPs <= 0 || roofBW <= 0 {
		return p
	}
	switch {
	case *flops == 0:
		// Pure data movement: only the bandwidth roof applies.
		p.Bound = BoundMemory
		if dur > 0 {
			p.RoofShare = ptr(p.BytesPerS / roofBW)
		}
	case p.Intensity == nil:
		// FLOPs without recorded bytes: only the compute roof is known.
		p.Bound = BoundCompute
		if p.FLOPsPerS != nil {
			p.RoofShare = ptr(*p.FLOPsPerS / peakFLOPs)
		}
	default:
		roof := peakFLOPs
		p.Bound = BoundCompute
		if *p.Intensity < peakFLOPs/roofBW {
			p.Bound = BoundMemory
			roof = *p.Intensity * roofBW
		}
		if p.FLOPsPerS != nil && roof > 0 {
			p.RoofShare = ptr(*p.FLOPsPerS / roof)
		}
	}
	if p.Bound == BoundMemory && p.RoofShare != nil && *p.RoofShare < OverheadRoofShare && bytes/roofBW < OverheadIdealS {
		p.Bound = BoundOverhead
	}
	return p
}

// Attainable returns the roofline's attainable FLOP/s at an arithmetic
// intensity: min(peak FLOP/s, intensity × peak bytes/s).
func Attainable(p report.Peaks, intensity float64) float64 {
	return min(p.FLOPsPerS, intensity*p.BytesPerS)
}

func ptr(v float64) *float64 { return &v }

func intPtr(v int) *int { return &v }
