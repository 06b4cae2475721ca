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
)

// Roofline computes the per-operator roofline of the profiled run in ops
// (its Timeline): each operator's FLOPs (OperatorFLOPs), bytes (activation
// + parameter + output sizes), arithmetic intensity, achieved FLOP/s and
// bytes/s, and, when peaks is not nil, whether it is compute- or
// memory-bound and which share of its roof it reached. It returns nil when
// ops has no timeline.
func Roofline(ops *report.Operators, peaks *report.Peaks) *report.Roofline {
	if ops == nil || len(ops.Timeline) == 0 {
		return nil
	}
	r := &report.Roofline{Nodes: len(ops.Timeline), Ops: make([]report.RooflineOp, 0, len(ops.Timeline))}
	type agg struct {
		t          report.RooflineOpType
		knownFLOPs float64
		knownBytes float64
		knownTime  float64
		known      int
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
		op.RooflinePoint = point(f, bytes, self, self, peaks)
		r.Ops = append(r.Ops, op)
		r.TimeS += self
		r.Bytes += bytes

		key := [2]string{n.OpType, n.Provider}
		a := byType[key]
		if a == nil {
			a = &agg{t: report.RooflineOpType{OpType: n.OpType, Provider: n.Provider}}
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
	}
	if r.TimeS > 0 {
		r.KnownTimeShare = knownTime / r.TimeS
	}
	for t := range unknownTypes {
		r.UnknownOpTypes = append(r.UnknownOpTypes, t)
	}
	sort.Strings(r.UnknownOpTypes)
	for _, key := range order {
		a := byType[key]
		t := a.t
		if r.TimeS > 0 {
			t.Share = t.TimeS / r.TimeS
		}
		if a.known > 0 {
			p := point(ptr(a.knownFLOPs), a.knownBytes, a.knownTime, a.knownTime, peaks)
			p.Bytes = t.Bytes
			if t.TimeS > 0 {
				p.BytesPerS = t.Bytes / t.TimeS
			}
			t.RooflinePoint = p
		} else {
			t.RooflinePoint = point(nil, t.Bytes, t.TimeS, t.TimeS, peaks)
		}
		r.ByOpType = append(r.ByOpType, t)
	}
	sort.SliceStable(r.ByOpType, func(i, j int) bool { return r.ByOpType[i].TimeS > r.ByOpType[j].TimeS })
	return r
}

// point places work on the roofline. flopTime is the time the FLOPs took,
// byteTime the time the bytes took (the same for one operator).
func point(flops *float64, bytes, flopTime, byteTime float64, peaks *report.Peaks) report.RooflinePoint {
	p := report.RooflinePoint{FLOPs: flops, Bytes: bytes, Bound: BoundUnknown}
	if byteTime > 0 {
		p.BytesPerS = bytes / byteTime
	}
	if flops == nil {
		return p
	}
	if bytes > 0 {
		p.Intensity = ptr(*flops / bytes)
	}
	if flopTime > 0 {
		p.FLOPsPerS = ptr(*flops / flopTime)
	}
	if peaks == nil || peaks.FLOPsPerS <= 0 || peaks.BytesPerS <= 0 {
		return p
	}
	switch {
	case *flops == 0:
		// Pure data movement: only the bandwidth roof applies.
		p.Bound = BoundMemory
		if byteTime > 0 {
			p.RoofShare = ptr(p.BytesPerS / peaks.BytesPerS)
		}
	case p.Intensity == nil:
		// FLOPs without recorded bytes: only the compute roof is known.
		p.Bound = BoundCompute
		if p.FLOPsPerS != nil {
			p.RoofShare = ptr(*p.FLOPsPerS / peaks.FLOPsPerS)
		}
	default:
		ridge := peaks.FLOPsPerS / peaks.BytesPerS
		roof := peaks.FLOPsPerS
		p.Bound = BoundCompute
		if *p.Intensity < ridge {
			p.Bound = BoundMemory
			roof = *p.Intensity * peaks.BytesPerS
		}
		if p.FLOPsPerS != nil && roof > 0 {
			p.RoofShare = ptr(*p.FLOPsPerS / roof)
		}
	}
	return p
}

// Attainable returns the roofline's attainable FLOP/s at an arithmetic
// intensity: min(peak FLOP/s, intensity × peak bytes/s).
func Attainable(p report.Peaks, intensity float64) float64 {
	return min(p.FLOPsPerS, intensity*p.BytesPerS)
}

func ptr(v float64) *float64 { return &v }
