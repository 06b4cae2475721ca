package profile

import (
	"cmp"
	"slices"
)

// ExecuteName is the name of the Session event ONNX Runtime writes for each
// run of a graph: once per Run for the main graph and, nested inside the
// node that ran it, once per run of an If, Loop or Scan subgraph.
const ExecuteName = "SequentialExecutor::Execute"

// IsExecute reports whether e is a SequentialExecutor::Execute event.
func (e *Event) IsExecute() bool { return e.Category == "Session" && e.Name == ExecuteName }

// Placement is where one event of a run sits in the run's tree of nodes.
type Placement struct {
	// Parent is the index of the kernel event that ran this event's graph
	// (an If, Loop or Scan node, or any node that ran a subgraph), or -1
	// when the event belongs to the run's main graph.
	Parent int
	// Depth is 0 in the main graph, 1 inside a subgraph of the main graph,
	// and so on.
	Depth int
	// Self is the event's duration, µs, less the durations of the kernels
	// nested directly under it (never below 0). For a node without
	// subgraphs it is its duration; summed over a run's kernels it counts
	// every microsecond once.
	Self int64
}

// Nest places the events of one run (its kernel and SequentialExecutor::
// Execute events, in any order) in a tree. ONNX Runtime writes a subgraph's
// nodes flat, before the node that ran them, with inlined names such as
// "If_0_then_branch__Inline_0__/decoder/Cast"; what ties them to that node is
// time: each subgraph run is a SequentialExecutor::Execute event inside the
// interval of its node, and the subgraph's nodes lie inside that Execute.
// So a kernel's parent is the innermost kernel that encloses the innermost
// Execute enclosing it. Nodes that merely overlap in time (a parallel
// executor) never become each other's parents: only an Execute between them
// makes a nesting.
//
// The result has one Placement per event, in the order of evs. Execute
// events get the Parent of the kernel that ran them and a Self of 0.
func Nest(evs []Event) []Placement {
	out := make([]Placement, len(evs))
	nestInto(out, evs, nil)
	return out
}

// nestInto is Nest writing into out (len(out) >= len(evs)), with order as
// scratch space to reuse between calls; it returns order for reuse. The
// Grouper nests each run it closes with it.
func nestInto(out []Placement, evs []Event, order []int) []int {
	order = order[:0]
	for i := range evs {
		order = append(order, i)
		out[i] = Placement{Parent: -1, Self: max(evs[i].Dur, 0)}
	}
	// Enclosing events first: by start, then by end descending, then a
	// kernel before the Execute it ran (they may share both ends).
	slices.SortFunc(order, func(a, b int) int {
		x, y := &evs[a], &evs[b]
		if x.TS != y.TS {
			return cmp.Compare(x.TS, y.TS)
		}
		if xe, ye := x.TS+x.Dur, y.TS+y.Dur; xe != ye {
			return cmp.Compare(ye, xe)
		}
		if xk, yk := !x.IsExecute(), !y.IsExecute(); xk != yk {
			if xk {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	// stack holds the events enclosing the current one, outermost first.
	var stackBuf [32]int
	stack := stackBuf[:0]
	for _, i := range order {
		e := &evs[i]
		end := e.TS + e.Dur
		for len(stack) > 0 {
			t := &evs[stack[len(stack)-1]]
			if t.TS <= e.TS && end <= t.TS+t.Dur {
				break
			}
			stack = stack[:len(stack)-1]
		}
		// The innermost enclosing Execute, then the innermost kernel
		// enclosing that: the node that ran e's graph.
		parent, depth := -1, 0
		for x := len(stack) - 1; x >= 0; x-- {
			if !evs[stack[x]].IsExecute() {
				continue
			}
			for k := x - 1; k >= 0; k-- {
				if !evs[stack[k]].IsExecute() {
					parent = stack[k]
					break
				}
			}
			break
		}
		if e.IsExecute() {
			// An Execute's own nesting is that of the kernel that ran it.
			for k := len(stack) - 1; k >= 0; k-- {
				if !evs[stack[k]].IsExecute() {
					parent = stack[k]
					break
				}
			}
			out[i].Self = 0
		}
		if parent >= 0 {
			depth = out[parent].Depth + 1
			if !e.IsExecute() {
				out[parent].Self = max(out[parent].Self-max(e.Dur, 0), 0)
			}
		}
		out[i].Parent, out[i].Depth = parent, depth
		stack = append(stack, i)
	}
	return order
}
