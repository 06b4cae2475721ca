package analysis

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// PlacementDelta compares where the nodes of the two runs' profiled runs
// ran (see Placement): nodes per execution provider, CPU fallback and
// memory copies.
type PlacementDelta struct {
	// Providers has one row per provider either side ran nodes on.
	Providers []ProviderDelta `json:"providers"`
	// AFallbackNodes and BFallbackNodes count the nodes that fell back to
	// the CPU (0 when only the CPU was requested); the shares are of each
	// side's operator time.
	AFallbackNodes int     `json:"a_fallback_nodes"`
	BFallbackNodes int     `json:"b_fallback_nodes"`
	AFallbackShare float64 `json:"a_fallback_share"`
	BFallbackShare float64 `json:"b_fallback_share"`
	// Copy nodes, the bytes they moved and their share of operator time.
	ACopyNodes int     `json:"a_copy_nodes"`
	BCopyNodes int     `json:"b_copy_nodes"`
	ACopyBytes int64   `json:"a_copy_bytes"`
	BCopyBytes int64   `json:"b_copy_bytes"`
	ACopyShare float64 `json:"a_copy_share"`
	BCopyShare float64 `json:"b_copy_share"`
}

// ProviderDelta compares the nodes one provider ran.
type ProviderDelta struct {
	Provider string  `json:"provider"`
	ANodes   int     `json:"a_nodes"`
	BNodes   int     `json:"b_nodes"`
	AShare   float64 `json:"a_share"`
	BShare   float64 `json:"b_share"`
}

// comparePlacement compares the placements of two reports' profiled runs;
// nil unless both have an operator timeline.
func comparePlacement(a, b *report.Report) *PlacementDelta {
	if a.Operators == nil || b.Operators == nil {
		return nil
	}
	pa := Placement(a.Runtime.Providers, a.Operators.Timeline)
	pb := Placement(b.Runtime.Providers, b.Operators.Timeline)
	if pa == nil || pb == nil {
		return nil
	}
	d := &PlacementDelta{
		ACopyNodes: pa.Copies.Nodes, BCopyNodes: pb.Copies.Nodes,
		ACopyBytes: pa.Copies.Bytes, BCopyBytes: pb.Copies.Bytes,
		ACopyShare: pa.Copies.Share, BCopyShare: pb.Copies.Share,
	}
	if pa.Fallback != nil {
		d.AFallbackNodes, d.AFallbackShare = pa.Fallback.Nodes, pa.Fallback.Share
	}
	if pb.Fallback != nil {
		d.BFallbackNodes, d.BFallbackShare = pb.Fallback.Nodes, pb.Fallback.Share
	}
	rows := map[string]*ProviderDelta{}
	row := func(p string) *ProviderDelta {
		r := rows[p]
		if r == nil {
			r = &ProviderDelta{Provider: p}
			rows[p] = r
		}
		return r
	}
	for _, r := range pa.ByProvider {
		x := row(r.Provider)
		x.ANodes, x.AShare = r.Nodes, r.Share
	}
	for _, r := range pb.ByProvider {
		x := row(r.Provider)
		x.BNodes, x.BShare = r.Nodes, r.Share
	}
	for _, r := range rows {
		d.Providers = append(d.Providers, *r)
	}
	sort.Slice(d.Providers, func(i, j int) bool {
		x, y := d.Providers[i], d.Providers[j]
		if x.ANodes+x.BNodes != y.ANodes+y.BNodes {
			return x.ANodes+x.BNodes > y.ANodes+y.BNodes
		}
		return x.Provider < y.Provider
	})
	return d
}

// trivial reports whether both sides ran every node on the CPU provider
// with no copies: nothing worth a section.
func (d *PlacementDelta) trivial() bool {
	return len(d.Providers) == 1 && d.Providers[0].Provider == CPUProvider && d.ACopyNodes == 0 && d.BCopyNodes == 0
}

func provName(p string) string {
	if p == "" {
		return "not recorded"
	}
	return strings.TrimSuffix(p, "ExecutionProvider")
}

// writePlacementDelta renders the comparison of placements; markdown
// selects the Markdown form. It writes nothing when both sides ran all on
// the CPU without copies.
func writePlacementDelta(w io.Writer, d *PlacementDelta, markdown bool) {
	if d == nil || d.trivial() {
		return
	}
	var parts []string
	for _, r := range d.Providers {
		parts = append(parts, fmt.Sprintf("%s %d → %d nodes", provName(r.Provider), r.ANodes, r.BNodes))
	}
	fb := fmt.Sprintf("CPU fallback %d nodes (%s) → %d nodes (%s)", d.AFallbackNodes, units.Percent(d.AFallbackShare, 1), d.BFallbackNodes, units.Percent(d.BFallbackShare, 1))
	cp := fmt.Sprintf("memory copies %d (%s, %s) → %d (%s, %s)", d.ACopyNodes, units.Bytes(d.ACopyBytes), units.Percent(d.ACopyShare, 1),
		d.BCopyNodes, units.Bytes(d.BCopyBytes), units.Percent(d.BCopyShare, 1))
	if markdown {
		fmt.Fprintf(w, "Execution providers (profiled run, A → B): %s; %s; %s.\n\n", strings.Join(parts, ", "), fb, cp)
		return
	}
	fmt.Fprintf(w, "\nExecution providers (profiled run, A → B)\n  %s\n  %s\n  %s\n", strings.Join(parts, ", "), fb, cp)
}
