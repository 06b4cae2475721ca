package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/ortel-dev/ortel/internal/units"
)

// providerName is a provider for people: the short name, or "not recorded"
// when the profile did not say.
func providerName(p string) string {
	if p == "" {
		return "not recorded"
	}
	return shortProvider(p)
}

// direction is a copy direction for people.
func direction(d string) string {
	switch d {
	case "host_to_device":
		return "host → device"
	case "device_to_host":
		return "device → host"
	}
	return d
}

// cpuOnly reports whether every node ran on the CPU provider and nothing
// was copied: the placement then fits on one line.
func (pl *Placement) cpuOnly() bool {
	return len(pl.ByProvider) == 1 && pl.ByProvider[0].Provider == "CPUExecutionProvider" && pl.Copies.Nodes == 0
}

// summaryLine is the one-line form of a placement, for CPU-only runs.
func (pl *Placement) summaryLine() string {
	return fmt.Sprintf("all nodes on CPUExecutionProvider, no memory copies (%d nodes, %s in operators)", pl.Nodes, units.Duration(pl.TimeS))
}

// opList lists the op types that fell back to the CPU.
func (fb *Fallback) opList(limit int) string {
	parts := make([]string, 0, len(fb.ByOpType))
	for i, o := range fb.ByOpType {
		if limit > 0 && i == limit {
			parts = append(parts, fmt.Sprintf("… %d more", len(fb.ByOpType)-limit))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d (%s)", o.OpType, o.Nodes, units.Duration(o.TimeS)))
	}
	return strings.Join(parts, ", ")
}

// writePlacementText renders the execution-provider section for a
// terminal.
func writePlacementText(p *printer, pl *Placement) {
	if pl == nil || p.err != nil {
		return
	}
	if pl.cpuOnly() {
		p.f("Execution providers: %s\n\n", pl.summaryLine())
		return
	}
	p.f("Execution providers (one profiled run: %d nodes, %s in operators; requested %s)\n", pl.Nodes, units.Duration(pl.TimeS), strings.Join(pl.Requested, ", "))
	tw := tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  provider\tnodes\ttime\tshare\n")
	for _, r := range pl.ByProvider {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%5.1f%%\n", providerName(r.Provider), r.Nodes, units.Duration(r.TimeS), 100*r.Share)
	}
	if p.err = tw.Flush(); p.err != nil {
		return
	}
	if fb := pl.Fallback; fb != nil {
		if fb.Nodes == 0 {
			p.f("  CPU fallback: none")
		} else {
			p.f("  CPU fallback: %s, %s (%.1f%% of operator time): %s", Plural(fb.Nodes, "node"), units.Duration(fb.TimeS), 100*fb.Share, fb.opList(8))
		}
		if fb.ShapeNodes > 0 {
			p.f("; %s on the CPU by design, not counted", Plural(fb.ShapeNodes, "shape node"))
		}
		p.f("\n")
	}
	c := pl.Copies
	if c.Nodes == 0 {
		p.f("  memory copies: none\n\n")
		return
	}
	p.f("  memory copies: %s, %s, %s (%.1f%% of operator time)", Plural(c.Nodes, "node"), units.Bytes(c.Bytes), units.Duration(c.TimeS), 100*c.Share)
	if c.UnknownBytesNodes > 0 {
		p.f("; size unknown for %d", c.UnknownBytesNodes)
	}
	p.f("\n")
	if p.err != nil {
		return
	}
	tw = tabwriter.NewWriter(p.w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "    copy\tdirection\tprovider\tnodes\tbytes\ttime\tshare\trate\n")
	for _, k := range c.ByKind {
		fmt.Fprintf(tw, "    %s\t%s\t%s\t%d\t%s\t%s\t%5.1f%%\t%s\n", k.OpType, direction(k.Direction), providerName(k.Provider), k.Nodes,
			units.Bytes(k.Bytes), units.Duration(k.TimeS), 100*k.Share, copyRate(k.BytesPerS))
	}
	p.err = tw.Flush()
	p.f("\n")
}

func copyRate(v float64) string {
	if v <= 0 {
		return "-"
	}
	return units.Rate(v, "B/s")
}

// writePlacementMarkdown renders the execution-provider section as
// Markdown.
func writePlacementMarkdown(p *printer, pl *Placement) {
	if pl == nil {
		return
	}
	p.f("## Execution providers\n\n")
	if pl.cpuOnly() {
		p.f("One profiled run: %s.\n\n", pl.summaryLine())
		return
	}
	p.f("One profiled run: %d nodes, %s in operators; requested %s.\n\n", pl.Nodes, units.Duration(pl.TimeS), mdEsc(strings.Join(pl.Requested, ", ")))
	p.f("| provider | nodes | time | share |\n|---|---:|---:|---:|\n")
	for _, r := range pl.ByProvider {
		p.f("| %s | %d | %s | %.1f%% |\n", mdEsc(providerName(r.Provider)), r.Nodes, units.Duration(r.TimeS), 100*r.Share)
	}
	p.f("\n")
	if fb := pl.Fallback; fb != nil {
		if fb.Nodes == 0 {
			p.f("CPU fallback: none.")
		} else {
			p.f("CPU fallback: %s, %s (%.1f%% of operator time): %s.", Plural(fb.Nodes, "node"), units.Duration(fb.TimeS), 100*fb.Share, mdEsc(fb.opList(0)))
		}
		if fb.ShapeNodes > 0 {
			p.f(" Shape arithmetic on the CPU by design, not counted: %s.", Plural(fb.ShapeNodes, "node"))
		}
		p.f("\n\n")
	}
	c := pl.Copies
	if c.Nodes == 0 {
		p.f("Memory copies: none.\n\n")
		return
	}
	p.f("Memory copies: %s, %s, %s (%.1f%% of operator time).\n\n", Plural(c.Nodes, "node"), units.Bytes(c.Bytes), units.Duration(c.TimeS), 100*c.Share)
	p.f("| copy | direction | provider | nodes | bytes | time | share | rate |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, k := range c.ByKind {
		p.f("| %s | %s | %s | %d | %s | %s | %.1f%% | %s |\n", mdEsc(k.OpType), direction(k.Direction), mdEsc(providerName(k.Provider)), k.Nodes,
			units.Bytes(k.Bytes), units.Duration(k.TimeS), 100*k.Share, copyRate(k.BytesPerS))
	}
	p.f("\n")
}

// summaryRows are the placement's scalars for the CSV summary table, as
// name, value, unit.
func (pl *Placement) summaryRows() [][]string {
	var rows [][]string
	add := func(name string, v float64, unit string) { rows = append(rows, []string{name, num(v), unit}) }
	for _, r := range pl.ByProvider {
		p := r.Provider
		if p == "" {
			p = "not_recorded"
		}
		add("nodes."+p, float64(r.Nodes), "{node}")
		add("share."+p, r.Share, "1")
	}
	if fb := pl.Fallback; fb != nil {
		add("fallback_nodes", float64(fb.Nodes), "{node}")
		add("fallback_share", fb.Share, "1")
	}
	add("copy_nodes", float64(pl.Copies.Nodes), "{node}")
	add("copy_bytes", float64(pl.Copies.Bytes), "By")
	add("copy_share", pl.Copies.Share, "1")
	return rows
}
