package analysis

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// Thresholds of the control-flow rule (docs/report-schema.md).
const (
	// ControlFlowOwnShare: the control-flow nodes' own time (If, Loop,
	// Scan, less their subgraphs' nodes) taking this share of operator
	// time fires the rule, as do control-flow nodes holding DominantShare
	// with their subgraphs (info when their own time is under
	// ControlFlowOwnShare); ControlFlowHighShare of own time makes it
	// high.
	ControlFlowOwnShare  = 0.10
	ControlFlowHighShare = 0.40
	// ControlFlowTop op types and nodes inside the subgraphs are named.
	ControlFlowTop = 5
)

// controlFlowOps are the operators that run subgraphs.
var controlFlowOps = setOf("If", "Loop", "Scan")

// controlFlow is what the outermost control-flow nodes of the timeline run
// and their subgraphs took.
type controlFlow struct {
	roots    []report.NodeTiming // outermost control-flow nodes, by time
	nested   int                 // control-flow nodes inside subgraphs
	inside   []report.NodeTiming // every node a subgraph ran, control flow excluded
	own      []report.NodeTiming // the control-flow nodes, roots and nested
	children map[string]int      // root name -> nodes its subgraphs ran
}

// placeControlFlow ties each node of a subgraph to the outermost
// control-flow node that ran it. The profile writes a subgraph's nodes
// flat with inlined names ("If_0_then_branch__Inline_0__/stft/Conv");
// ortel's profile reader placed them by time (Depth, and SubgraphS on the
// node that ran them), so the run's nodes in start order, with a stack of
// the nodes running subgraphs, give each node its enclosing nodes.
func placeControlFlow(tl []report.NodeTiming) controlFlow {
	order := make([]int, len(tl))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return tl[order[a]].StartS < tl[order[b]].StartS })
	cf := controlFlow{children: map[string]int{}}
	var stack []int // nodes running subgraphs, by depth
	for _, i := range order {
		n := tl[i]
		runs := controlFlowOps[n.OpType] || n.SubgraphS > 0
		if n.Depth > 0 && len(stack) >= n.Depth {
			root := tl[stack[0]]
			cf.children[root.Name]++
			if runs {
				cf.nested++
				cf.own = append(cf.own, n)
			} else {
				cf.inside = append(cf.inside, n)
			}
		}
		if !runs {
			continue
		}
		if n.Depth < len(stack) {
			stack = stack[:n.Depth]
		}
		if n.Depth == len(stack) {
			stack = append(stack, i)
			if n.Depth == 0 {
				cf.roots = append(cf.roots, n)
				cf.own = append(cf.own, n)
			}
		}
	}
	return cf
}

// ruleControlFlow fires when If, Loop or Scan nodes take a large share of
// operator time, by their own time or with their subgraphs, and says
// what the subgraphs' nodes take and what the control-flow nodes' own
// time is: the time inside them that no subgraph node accounts for.
func ruleControlFlow(f *Facts) *report.Finding {
	cf := placeControlFlow(f.Timeline)
	if len(cf.roots) == 0 {
		return nil
	}
	b := newShareBasis(f)
	var own, inside float64
	byType := map[string]float64{}
	ownTypes := map[string]int{}
	for _, n := range cf.own {
		own += b.node(n)
		ownTypes[n.OpType]++
	}
	for _, n := range cf.inside {
		s := b.node(n)
		inside += s
		byType[n.OpType] += s
	}
	if own < ControlFlowOwnShare && own+inside < DominantShare {
		return nil
	}
	kinds := countList(ownTypes, 0) // "7 If"
	names := sortedKeys(ownTypes)
	kind := strings.Join(names, "/")
	top := cf.roots[0]
	for _, r := range cf.roots[1:] {
		if r.DurS > top.DurS {
			top = r
		}
	}
	subject := top.Name
	if len(cf.roots) > 1 {
		subject = fmt.Sprintf("%s and %d more %s nodes", top.Name, len(cf.roots)-1, kind)
	}
	fd := &report.Finding{
		Severity: SeverityMedium, Impact: own,
		Title: fmt.Sprintf("%s with its subgraphs takes %s of operator time, %s of it the %s nodes' own time", subject, units.Percent(own+inside, 1), units.Percent(own, 1), kind),
		Evidence: []report.Evidence{ev("control_flow_share", own+inside, "1"), ev("control_flow_own_share", own, "1"), ev("subgraph_share", inside, "1"),
			ev("subgraph_nodes", float64(len(cf.inside)+cf.nested), "{node}"), evText("control_flow_nodes", kinds)},
	}
	switch {
	case own >= ControlFlowHighShare:
		fd.Severity = SeverityHigh
	case own < ControlFlowOwnShare:
		// Fired by what runs inside, not by the control flow's own cost:
		// it says where the tables' op types run.
		fd.Severity = SeverityInfo
	}
	var parts []string
	for i, t := range sortedByValue(byType) {
		if i == ControlFlowTop {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", t, units.Percent(byType[t], 1)))
		fd.Evidence = append(fd.Evidence, ev("inside."+t+".share", byType[t], "1"))
	}
	nodes := append([]report.NodeTiming(nil), cf.inside...)
	sort.SliceStable(nodes, func(i, j int) bool { return b.node(nodes[i]) > b.node(nodes[j]) })
	var nodeParts []string
	for _, n := range nodes[:min(3, len(nodes))] {
		nodeParts = append(nodeParts, fmt.Sprintf("%s (%s) %s", n.Name, n.OpType, units.Percent(b.node(n), 1)))
	}
	fd.Detail = fmt.Sprintf("Its subgraphs ran %s per run. Inside, by self time over the profiled runs: %s", report.Plural(len(cf.inside)+cf.nested, "node"), strings.Join(parts, ", "))
	if len(byType) > ControlFlowTop {
		fd.Detail += fmt.Sprintf(" (the top %d of %d op types)", ControlFlowTop, len(byType))
	}
	if len(nodeParts) > 0 {
		fd.Detail += "; the largest nodes: " + strings.Join(nodeParts, ", ")
	}
	fd.Detail += "."
	// The own time: what the control-flow nodes spend outside the nodes
	// of their subgraphs.
	perCall := ""
	if m := b.meanS[kind]; m > 0 {
		perCall = fmt.Sprintf(", %s per call over the profiled runs", units.Duration(m))
		fd.Evidence = append(fd.Evidence, ev("control_flow_own_per_call", m, "s"))
	}
	fd.Detail += fmt.Sprintf(" The %s nodes' own time, %s (%s per run%s), is time inside them that no subgraph node accounts for: preparing each branch or iteration and its outputs, and the executor stepping from one subgraph node to the next (in a profiled run, also the profiler recording each node).",
		kind, units.Percent(own, 1), kinds, perCall)
	if c := cf.children[top.Name]; c > 0 && top.SelfS() > 0 {
		fd.Detail += fmt.Sprintf(" %s's own %s is %s for each of the %d nodes its subgraphs ran; between main-graph nodes that time is charged to no node.",
			top.Name, units.Duration(top.SelfS()), units.Duration(top.SelfS()/float64(c)), c)
		fd.Evidence = append(fd.Evidence, ev("root_own_per_subgraph_node", top.SelfS()/float64(c), "s"), evText("root", top.Name))
	}
	if f.CPUUtilization != nil && *f.CPUUtilization >= 0.9 {
		fd.Detail += fmt.Sprintf(" The host's CPUs were %s busy: time the thread waited for a core between subgraph nodes counts as own time too, so measure on idle cores before acting on it.", units.Percent(*f.CPUUtilization, 0))
	}
	fd.Recommendation = fmt.Sprintf("Take the %s out of the hot path: export a variant whose condition is fixed (one sample rate; separate decoders with and without a cache instead of a merged one), or make the condition a constant initializer so ONNX Runtime's constant folding inlines the branch when the session is created; its nodes then run in the main graph. Then work on the op types inside as on any others: the tables list them with the rest.", kind)
	return fd
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sortedByValue returns m's keys, largest value first (ties by name).
func sortedByValue(m map[string]float64) []string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	return keys
}
