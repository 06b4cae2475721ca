package analysis

import (
	"math"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
)

// This file places the operators of a profiled run on their execution
// providers: nodes and time per provider, the nodes that fell back to the
// CPU while another provider was requested, and the memory copies ONNX
// Runtime inserted between devices. The cpu-fallback and memcpy-transitions
// rules read the same placement, so the report's rows and its findings
// always agree.

// Directions of a memory copy.
const (
	CopyHostToDevice = "host_to_device"
	CopyDeviceToHost = "device_to_host"
	CopyOther        = "other"
)

// CPUProvider is ONNX Runtime's name for its CPU execution provider.
const CPUProvider = "CPUExecutionProvider"

// Placement computes where the nodes of one profiled run ran, given the
// providers the session requested (in priority order). It returns nil for
// an empty timeline.
func Placement(requested []string, tl []report.NodeTiming) *report.Placement {
	if len(tl) == 0 {
		return nil
	}
	p := &report.Placement{Requested: append([]string{}, requested...), Nodes: len(tl)}
	for _, n := range tl {
		p.TimeS += n.SelfS()
	}
	share := func(t float64) float64 {
		if p.TimeS <= 0 {
			return 0
		}
		return t / p.TimeS
	}

	byProv := map[string]*report.ProviderRow{}
	for _, n := range tl {
		r := byProv[n.Provider]
		if r == nil {
			r = &report.ProviderRow{Provider: n.Provider}
			byProv[n.Provider] = r
		}
		r.Nodes++
		r.TimeS += n.SelfS()
	}
	for _, r := range byProv {
		r.Share = share(r.TimeS)
		p.ByProvider = append(p.ByProvider, *r)
	}
	sort.Slice(p.ByProvider, func(i, j int) bool {
		a, b := p.ByProvider[i], p.ByProvider[j]
		if a.TimeS != b.TimeS {
			return a.TimeS > b.TimeS
		}
		return a.Provider < b.Provider
	})

	if accelerated(requested) {
		fb := &report.Fallback{}
		fallback := func(n report.NodeTiming) bool {
			return n.Provider == CPUProvider && !IsMemcpy(n.OpType) && !shapeOnly(n)
		}
		for _, n := range tl {
			switch {
			case fallback(n):
				fb.Nodes++
				fb.TimeS += n.SelfS()
			case n.Provider == CPUProvider && !IsMemcpy(n.OpType):
				fb.ShapeNodes++
			}
		}
		fb.Share = share(fb.TimeS)
		fb.ByOpType = byOpType(tl, fallback, share)
		p.Fallback = fb
	}

	c := &p.Copies
	c.ByKind, c.List = []report.CopyKind{}, []report.CopyNode{}
	kinds := map[[2]string]*report.CopyKind{}
	for _, n := range tl {
		if !IsMemcpy(n.OpType) {
			continue
		}
		dir := CopyDirection(n.OpType)
		b := CopyBytes(n)
		shape := ""
		if len(n.OutputShapes) > 0 {
			shape = n.OutputShapes[0]
		}
		c.List = append(c.List, report.CopyNode{Name: n.Name, OpType: n.OpType, Direction: dir, Provider: n.Provider,
			Shape: shape, Bytes: b, StartS: n.StartS, DurS: n.SelfS()})
		c.Nodes++
		c.TimeS += n.SelfS()
		k := kinds[[2]string{n.OpType, n.Provider}]
		if k == nil {
			k = &report.CopyKind{OpType: n.OpType, Direction: dir, Provider: n.Provider}
			kinds[[2]string{n.OpType, n.Provider}] = k
		}
		k.Nodes++
		k.TimeS += n.SelfS()
		if b < 0 {
			c.UnknownBytesNodes++
			continue
		}
		c.Bytes += b
		k.Bytes += b
	}
	c.Share = share(c.TimeS)
	for _, k := range kinds {
		k.Share = share(k.TimeS)
		if k.TimeS > 0 && k.Bytes > 0 {
			k.BytesPerS = float64(k.Bytes) / k.TimeS
		}
		c.ByKind = append(c.ByKind, *k)
	}
	sort.Slice(c.ByKind, func(i, j int) bool {
		a, b := c.ByKind[i], c.ByKind[j]
		if a.TimeS != b.TimeS {
			return a.TimeS > b.TimeS
		}
		return a.OpType+a.Provider < b.OpType+b.Provider
	})
	return p
}

// accelerated reports whether a provider other than the CPU was requested.
func accelerated(requested []string) bool { return len(accelerators(requested)) > 0 }

// accelerators returns the requested providers other than the CPU, in
// priority order.
func accelerators(requested []string) []string {
	var out []string
	for _, r := range requested {
		if r != "" && r != CPUProvider {
			out = append(out, r)
		}
	}
	return out
}

// byOpType totals the nodes of tl that keep selects per op type, with
// each total's share (share of seconds), most time first, ties by name;
// never nil.
func byOpType(tl []report.NodeTiming, keep func(report.NodeTiming) bool, share func(float64) float64) []report.FallbackOp {
	out := []report.FallbackOp{}
	at := map[string]int{}
	for _, n := range tl {
		if !keep(n) {
			continue
		}
		i, ok := at[n.OpType]
		if !ok {
			i = len(out)
			at[n.OpType] = i
			out = append(out, report.FallbackOp{OpType: n.OpType})
		}
		out[i].Nodes++
		out[i].TimeS += n.SelfS()
	}
	for i := range out {
		out[i].Share = share(out[i].TimeS)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TimeS != b.TimeS {
			return a.TimeS > b.TimeS
		}
		return a.OpType < b.OpType
	})
	return out
}

// CopyDirection names the direction of a memory-copy op type:
// MemcpyFromHost copies host memory to the device, MemcpyToHost the other
// way.
func CopyDirection(op string) string {
	switch op {
	case "MemcpyFromHost":
		return CopyHostToDevice
	case "MemcpyToHost":
		return CopyDeviceToHost
	}
	return CopyOther
}

// CopyBytes is how many bytes a memory-copy node moved: its output_size from
// the profile when recorded, else the bytes of its output shapes (element
// size × elements), else its activation size (the input it copies); -1 when
// the profile gives none of them.
func CopyBytes(n report.NodeTiming) int64 {
	if n.OutputSize >= 0 {
		return n.OutputSize
	}
	if b, ok := shapeBytes(n.OutputShapes); ok {
		return b
	}
	if n.ActivationSize >= 0 {
		return n.ActivationSize
	}
	return -1
}

// shapeBytes sums the bytes of tensors in the profiler's "type[dims]" form;
// false when a shape does not parse or its element type has no fixed size.
func shapeBytes(shapes []string) (int64, bool) {
	if len(shapes) == 0 {
		return 0, false
	}
	var total float64
	for _, s := range shapes {
		sh, err := ParseShape(s)
		if err != nil {
			return 0, false
		}
		size, ok := elemSize[strings.ToLower(sh.Type)]
		if !ok {
			return 0, false
		}
		total += sh.Numel() * size
	}
	if total > math.MaxInt64/2 {
		return 0, false
	}
	return int64(total), true
}

// elemSize is the size in bytes of the element types ONNX Runtime's
// profiler names (its DataTypeImpl names, lower-cased, and the ONNX ones).
var elemSize = map[string]float64{
	"float": 4, "float32": 4, "double": 8, "float64": 8,
	"mlfloat16": 2, "float16": 2, "bfloat16": 2,
	"int8": 1, "uint8": 1, "bool": 1,
	"int16": 2, "uint16": 2,
	"int32": 4, "uint32": 4,
	"int64": 8, "uint64": 8,
	"float8e4m3fn": 1, "float8e4m3fnuz": 1, "float8e5m2": 1, "float8e5m2fnuz": 1,
}
