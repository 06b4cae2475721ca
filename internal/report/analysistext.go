package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ortel-dev/ortel/internal/units"
)

// TopRoofline is how many op types the text and Markdown rooflines list.
const TopRoofline = 12

// WriteAnalysisText renders the analysis section (roofline, findings,
// energy) for a terminal. It writes nothing when the report has no
// analysis.
func WriteAnalysisText(w io.Writer, r *Report) error {
	a := r.Analysis
	if a == nil {
		return nil
	}
	p := &printer{w: w}
	p.f("\n")
	if pk := a.Peaks; pk != nil {
		p.f("Machine peaks (%s)\n", orDash(pk.Machine))
		p.f("  compute    %s (%s)\n", units.Rate(pk.FLOPsPerS, "FLOP/s"), pk.FLOPsSource)
		p.f("  memory     %s (%s)\n", units.Rate(pk.BytesPerS, "B/s"), pk.BytesSource)
		p.f("  ridge      %.2f FLOP/byte\n", pk.Ridge)
		writeRoofsText(p, pk)
		p.f("\n")
	}
	if rf := a.Roofline; rf != nil {
		p.f("Roofline (one profiled run: %d nodes, %s in operators, %s, %s moved)\n", rf.Nodes, units.Duration(rf.TimeS), units.Rate(rf.FLOPs, "FLOP"), units.Bytes(int64(rf.Bytes)))
		if b := ShareBasis(r.Operators); b != "" {
			p.f("  share %s, as in Top operators\n", b)
		}
		if p.err == nil {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "  op type\tprovider\tshare\tFLOP/s\tbytes/s\tFLOP/byte\tbound\tvs roof\tof roof\n")
			for i, t := range rf.ByOpType {
				if i == TopRoofline {
					fmt.Fprintf(tw, "  … %d more op types\t\t\t\t\t\t\t\t\n", len(rf.ByOpType)-TopRoofline)
					break
				}
				fmt.Fprintf(tw, "  %s\t%s\t%5.1f%%\t%s\t%s\t%s\t%s\t%s\t%s\n", t.OpType, shortProvider(t.Provider), 100*t.Share,
					optRate(t.FLOPsPerS, "FLOP/s"), units.Rate(t.BytesPerS, "B/s"), optNum(t.Intensity), t.Bound, orDash(t.Roof), optPct(t.RoofShare))
			}
			p.err = tw.Flush()
		}
		p.f("  FLOPs known for %d of %d nodes (%.1f%% of operator time)", rf.KnownNodes, rf.Nodes, 100*rf.KnownTimeShare)
		if len(rf.UnknownOpTypes) > 0 {
			p.f("; unknown: %s", strings.Join(rf.UnknownOpTypes, ", "))
		}
		p.f("\n")
		writeAboveRoofText(p, rf)
		p.f("\n")
	}
	writePlacementText(p, a.Providers)
	p.f("Findings (%d)\n", len(a.Findings))
	if len(a.Findings) == 0 {
		p.f("  none: no rule fired\n")
	}
	for i, f := range a.Findings {
		p.f("  %d. [%s] %s\n", i+1, f.Severity, f.Title)
		p.f("     %s\n", f.Detail)
		p.f("     → %s\n", f.Recommendation)
		p.f("     evidence: %s\n", evidenceLine(f.Evidence))
	}
	p.f("\n")
	writeEnergyText(p, a.Energy, r.Hardware != nil && len(r.Hardware.Energy) == 0 && r.Hardware.EnergyUnavailable != "")
	for _, n := range a.Notes {
		p.f("analysis note: %s\n", n)
	}
	return p.err
}

// writeEnergyText renders the energy section; said is true when the
// hardware section already said why energy is unavailable.
func writeEnergyText(p *printer, e Energy, said bool) {
	p.f("Energy\n")
	if !e.Available && said {
		p.f("  unavailable (the hardware section says why)\n")
	} else if !e.Available {
		p.f("  unavailable: %s\n", e.Reason)
	} else {
		p.f("  per inference  %s", units.Energy(e.JoulesPerInference))
		if e.DynamicJoulesPerInference != nil {
			p.f(" (%s above idle)", units.Energy(*e.DynamicJoulesPerInference))
		}
		p.f(", %.3g inferences/J over %d runs\n", e.InferencesPerJoule, e.Inferences)
		p.f("  power          avg %.2f W, max %.2f W\n", e.AvgW, e.MaxW)
		if e.GFLOPsPerWatt != nil {
			p.f("  efficiency     %.3g GFLOP/s per W\n", *e.GFLOPsPerWatt)
		}
		for _, s := range e.Sources {
			total := ""
			if !s.InTotal {
				total = " (inside another source, not added)"
			}
			p.f("  %-14s %s/inference, avg %.2f W, max %.2f W%s\n", s.Name, units.Energy(s.JoulesPerInference), s.AvgW, s.MaxW, total)
		}
	}
	c := e.Carbon
	if c.GramsPerInference != nil {
		p.f("  carbon         %.3g gCO2e per 1000 inferences at %g gCO2e/kWh (%s)\n", *c.GramsPer1000, c.GridIntensity, c.GridSource)
	} else {
		p.f("  carbon         not estimated without energy; grid intensity %g gCO2e/kWh (%s)\n", c.GridIntensity, c.GridSource)
	}
}

func evidenceLine(ev []Evidence) string {
	parts := make([]string, 0, len(ev))
	for _, e := range ev {
		parts = append(parts, EvidenceString(e))
	}
	return strings.Join(parts, "; ")
}

// EvidenceString renders one evidence for people, as "name=value unit
// (text)", with readable units rather than UCUM codes: "nodes=93 nodes",
// "op_type_share=26.5%", "p99=1.2ms", "weights=12.3 MiB".
func EvidenceString(e Evidence) string {
	if e.Text != "" && e.Unit == "" && e.Value == 0 {
		return e.Name + "=" + e.Text
	}
	s := e.Name + "=" + evidenceValue(e)
	if e.Text != "" {
		s += " (" + e.Text + ")"
	}
	return s
}

// evidenceValue is the value in its unit (units.Value), except that a
// share, utilization or drop (unit "1") reads as a percentage: "26.5%".
func evidenceValue(e Evidence) string {
	if e.Unit == "1" {
		for _, suffix := range []string{"share", "utilization", "drop"} {
			if strings.HasSuffix(e.Name, suffix) {
				return fmt.Sprintf("%.3g%%", e.Value*100)
			}
		}
	}
	return units.Value(e.Value, e.Unit)
}

func optRate(v *float64, unit string) string {
	if v == nil {
		return "?"
	}
	return units.Rate(*v, unit)
}

func optNum(v *float64) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprintf("%.3g", *v)
}

func optPct(v *float64) string {
	if v == nil {
		return "-"
	}
	return units.Percent(*v, 0)
}
