package report

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/ortel-dev/ortel/internal/units"
)

// roofLevel is one memory level's roofs, per thread count, for display.
type roofLevel struct {
	level      string
	cacheBytes int64
	workingSet string
	byThreads  map[int]float64
}

// roofLevels groups peaks' roofs by level, in the order measured, and
// returns the thread counts measured, one thread first.
func roofLevels(pk *Peaks) ([]roofLevel, []int) {
	var levels []roofLevel
	index := map[string]int{}
	seen := map[int]bool{}
	var threads []int
	for _, l := range pk.Levels {
		i, ok := index[l.Level]
		if !ok {
			i = len(levels)
			index[l.Level] = i
			levels = append(levels, roofLevel{level: l.Level, cacheBytes: l.CacheBytes, workingSet: setsText(l), byThreads: map[int]float64{}})
		}
		levels[i].byThreads[l.Threads] = l.BytesPerS
		if !seen[l.Threads] {
			seen[l.Threads] = true
			threads = append(threads, l.Threads)
		}
	}
	// 1, 2, ... then 0 (the default) last.
	sort.Slice(threads, func(i, j int) bool {
		a, b := threads[i], threads[j]
		if (a == 0) != (b == 0) {
			return b == 0
		}
		return a < b
	})
	return levels, threads
}

// threadsLabel names a thread count: "1 thread", "default threads".
func threadsLabel(n int) string {
	switch n {
	case 0:
		return "default threads"
	case 1:
		return "1 thread"
	}
	return fmt.Sprintf("%d threads", n)
}

// writeRoofsText writes the bandwidth roofs per level, or says there is
// one roof and why.
func writeRoofsText(p *printer, pk *Peaks) {
	if len(pk.Levels) == 0 {
		if pk.Caches != "" {
			p.f("  one bandwidth roof: %s\n", pk.Caches)
		}
		return
	}
	levels, threads := roofLevels(pk)
	p.f("  bandwidth roofs per level (%s):\n", orDash(pk.Caches))
	if p.err != nil {
		return
	}
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "    %-5s\tcache\tworking sets\t", "level")
	for _, t := range threads {
		fmt.Fprintf(tw, "%s\t", threadsLabel(t))
	}
	fmt.Fprintln(tw)
	for _, l := range levels {
		cache := "-"
		if l.cacheBytes > 0 {
			cache = units.Bytes(l.cacheBytes)
		}
		fmt.Fprintf(tw, "    %-5s\t%s\t%s\t", l.level, cache, l.workingSet) // padded: the level reads left-aligned
		for _, t := range threads {
			if v, ok := l.byThreads[t]; ok {
				fmt.Fprintf(tw, "%s\t", units.Rate(v, "B/s"))
			} else {
				fmt.Fprintf(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	p.err = tw.Flush()
	p.f("  each node is compared with the roof of the smallest level its bytes fit in, on the model's thread count\n")
}

// aboveRoof returns the nodes above their roofs, highest share first.
func aboveRoof(rf *Roofline) []RooflineOp {
	var out []RooflineOp
	for _, op := range rf.Ops {
		if op.RoofShare != nil && *op.RoofShare > 1 {
			out = append(out, op)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return *out[i].RoofShare > *out[j].RoofShare })
	return out
}

// aboveGroup is the nodes above their roofs for one reason: how many,
// how many of each op type, and the highest above its roof, whose own
// sentence speaks for the group.
type aboveGroup struct {
	Reason  string
	Nodes   int
	ByType  []string
	Highest RooflineOp
}

// aboveGroups groups the nodes above their roofs by AboveReason (a report
// written before it existed has one group), the largest group first.
func aboveGroups(above []RooflineOp) []aboveGroup {
	var out []aboveGroup
	index := map[string]int{}
	counts := []map[string]int{}
	var types [][]string
	for _, op := range above { // highest share first: each group's first is its highest
		k, ok := index[op.AboveReason]
		if !ok {
			k = len(out)
			index[op.AboveReason] = k
			out = append(out, aboveGroup{Reason: op.AboveReason, Highest: op})
			counts = append(counts, map[string]int{})
			types = append(types, nil)
		}
		out[k].Nodes++
		if counts[k][op.OpType] == 0 {
			types[k] = append(types[k], op.OpType)
		}
		counts[k][op.OpType]++
	}
	for k := range out {
		sort.SliceStable(types[k], func(i, j int) bool { return counts[k][types[k][i]] > counts[k][types[k][j]] })
		for _, t := range types[k] {
			out[k].ByType = append(out[k].ByType, fmt.Sprintf("%s %d", t, counts[k][t]))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Nodes > out[j].Nodes })
	return out
}

// line is the group in one line: its size and reason, its op types, and
// its highest node with that node's own reason.
func (g aboveGroup) line() string {
	types := g.ByType
	if len(types) > 5 {
		types = append(types[:5:5], "…")
	}
	head := fmt.Sprintf("%d %s", g.Nodes, g.Reason)
	if g.Reason == "" {
		head = fmt.Sprintf("%d nodes", g.Nodes)
	}
	op := g.Highest
	return fmt.Sprintf("%s (%s); the highest, %s (%s, %s) at %s of its %s roof: %s", head, strings.Join(types, ", "),
		op.Name, op.OpType, units.Bytes(int64(op.Bytes)), units.Percent(*op.RoofShare, 0), roofName(op.RoofPlacement), op.AboveRoof)
}

// writeAboveRoofText lists the nodes above their roofs grouped by reason,
// one line a reason.
func writeAboveRoofText(p *printer, rf *Roofline) {
	above := aboveRoof(rf)
	if len(above) == 0 {
		if len(rf.Ops) > 0 && rf.Ops[0].Roof != "" {
			p.f("  no node is above its roof\n")
		}
		return
	}
	p.f("  %d of %d nodes above their roofs, by reason (each node's own in report.json, analysis.roofline.ops[].above_roof, and the HTML report):\n", len(above), rf.Nodes)
	for _, g := range aboveGroups(above) {
		p.f("    %s\n", g.line())
	}
}

// roofName is a roof with its thread count: "L2 (1 thread)".
func roofName(r RoofPlacement) string {
	if r.RoofThreads == nil {
		return r.Roof
	}
	return fmt.Sprintf("%s (%s)", r.Roof, threadsLabel(*r.RoofThreads))
}

// mdAboveRoof writes the nodes above their roofs as a Markdown list, one
// item a reason.
func mdAboveRoof(p *printer, rf *Roofline) {
	above := aboveRoof(rf)
	if len(above) == 0 {
		return
	}
	p.f("%d of %d nodes are above their roofs, by reason (each node's own in report.json):\n\n", len(above), rf.Nodes)
	for _, g := range aboveGroups(above) {
		p.f("- %s\n", mdEsc(g.line()))
	}
	p.f("\n")
}

// mdRoofs writes the per-level roofs as a Markdown table.
func mdRoofs(p *printer, pk *Peaks) {
	if len(pk.Levels) == 0 {
		if pk.Caches != "" {
			p.f("One bandwidth roof: %s.\n\n", mdEsc(pk.Caches))
		}
		return
	}
	levels, threads := roofLevels(pk)
	p.f("| level | cache | working sets |")
	for _, t := range threads {
		p.f(" %s |", threadsLabel(t))
	}
	p.f("\n|---|---:|---:|%s\n", strings.Repeat("---:|", len(threads)))
	for _, l := range levels {
		cache := "-"
		if l.cacheBytes > 0 {
			cache = units.Bytes(l.cacheBytes)
		}
		p.f("| %s | %s | %s |", l.level, cache, l.workingSet)
		for _, t := range threads {
			if v, ok := l.byThreads[t]; ok {
				p.f(" %s |", units.Rate(v, "B/s"))
			} else {
				p.f(" - |")
			}
		}
		p.f("\n")
	}
	p.f("\nCache sizes: %s. Each node is compared with the roof of the smallest level its bytes fit in, on the model's thread count.\n\n", mdEsc(orDash(pk.Caches)))
}

// sizeText renders a byte count of any integer or float type for the
// HTML template; zero is "-".
func sizeText(n any) string {
	var v int64
	switch x := n.(type) {
	case int64:
		v = x
	case int:
		v = int64(x)
	case float64:
		v = int64(x)
	}
	if v <= 0 {
		return "-"
	}
	return units.Bytes(v)
}

// setsText lists the working sets a roof was measured at.
func setsText(l BandwidthRoof) string {
	if len(l.WorkingSets) == 0 {
		return units.Bytes(l.WorkingSetBytes)
	}
	parts := make([]string, len(l.WorkingSets))
	for i, w := range l.WorkingSets {
		parts[i] = units.Bytes(w)
	}
	return strings.Join(parts, ", ")
}
