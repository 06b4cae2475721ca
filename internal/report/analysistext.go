package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
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
		p.f("  compute    %s (%s)\n", rate(pk.FLOPsPerS, "FLOP/s"), pk.FLOPsSource)
		p.f("  memory     %s (%s)\n", rate(pk.BytesPerS, "B/s"), pk.BytesSource)
		p.f("  ridge      %.2f FLOP/byte\n", pk.Ridge)
		writeRoofsText(p, pk)
		p.f("\n")
	}
	if rf := a.Roofline; rf != nil {
		p.f("Roofline (one profiled run: %d nodes, %s in operators, %s, %s moved)\n", rf.Nodes, dur(rf.TimeS), rate(rf.FLOPs, "FLOP"), bytesHuman(int64(rf.Bytes)))
		if p.err == nil {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintf(tw, "  op type\tprovider\tshare\tFLOP/s\tbytes/s\tFLOP/byte\tbound\tvs roof\tof roof\n")
			for i, t := range rf.ByOpType {
				if i == TopRoofline {
					fmt.Fprintf(tw, "  … %d more op types\t\t\t\t\t\t\t\t\n", len(rf.ByOpType)-TopRoofline)
					break
				}
				fmt.Fprintf(tw, "  %s\t%s\t%5.1f%%\t%s\t%s\t%s\t%s\t%s\t%s\n", t.OpType, shortProvider(t.Provider), 100*t.Share,
					optRate(t.FLOPsPerS, "FLOP/s"), rate(t.BytesPerS, "B/s"), optNum(t.Intensity), t.Bound, orDash(t.Roof), optPct(t.RoofShare))
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
	writeEnergyText(p, a.Energy)
	for _, n := range a.Notes {
		p.f("analysis note: %s\n", n)
	}
	return p.err
}

func writeEnergyText(p *printer, e Energy) {
	p.f("Energy\n")
	if !e.Available {
		p.f("  unavailable: %s\n", e.Reason)
	} else {
		p.f("  per inference  %s", joules(e.JoulesPerInference))
		if e.DynamicJoulesPerInference != nil {
			p.f(" (%s above idle)", joules(*e.DynamicJoulesPerInference))
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
			p.f("  %-14s %s/inference, avg %.2f W, max %.2f W%s\n", s.Name, joules(s.JoulesPerInference), s.AvgW, s.MaxW, total)
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

func evidenceValue(e Evidence) string {
	switch e.Unit {
	case "s":
		return dur(e.Value)
	case "1":
		// Shares, utilizations and drops are fractions: print percent.
		for _, suffix := range []string{"share", "utilization", "drop"} {
			if strings.HasSuffix(e.Name, suffix) {
				return fmt.Sprintf("%.3g%%", e.Value*100)
			}
		}
		return fmt.Sprintf("%.3g", e.Value)
	case "By":
		return bytesHuman(int64(e.Value))
	case "By/s":
		return rate(e.Value, "B/s")
	case "{flop}/s":
		return rate(e.Value, "FLOP/s")
	case "{flop}/By":
		return fmt.Sprintf("%.3g FLOP/B", e.Value)
	case "Cel":
		return fmt.Sprintf("%g °C", e.Value)
	case "":
		return fmt.Sprintf("%g", e.Value)
	}
	// Annotations: "{node}" -> "93 nodes", "{item}/s" -> "1.2 items/s".
	if strings.HasPrefix(e.Unit, "{") {
		if end := strings.Index(e.Unit, "}"); end > 1 {
			noun, rest := e.Unit[1:end], e.Unit[end+1:]
			if e.Value != 1 || rest != "" {
				noun += "s"
			}
			return fmt.Sprintf("%g %s%s", e.Value, noun, rest)
		}
	}
	return fmt.Sprintf("%g %s", e.Value, e.Unit)
}

// rate formats a rate with an SI prefix: "138.9 GFLOP/s".
func rate(v float64, unit string) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.2f T%s", v/1e12, unit)
	case v >= 1e9:
		return fmt.Sprintf("%.2f G%s", v/1e9, unit)
	case v >= 1e6:
		return fmt.Sprintf("%.2f M%s", v/1e6, unit)
	case v >= 1e3:
		return fmt.Sprintf("%.2f k%s", v/1e3, unit)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

func optRate(v *float64, unit string) string {
	if v == nil {
		return "?"
	}
	return rate(*v, unit)
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
	return fmt.Sprintf("%.0f%%", 100**v)
}

func joules(j float64) string {
	switch {
	case j == 0:
		return "0 J"
	case j < 1e-3:
		return fmt.Sprintf("%.3g µJ", j*1e6)
	case j < 1:
		return fmt.Sprintf("%.3g mJ", j*1e3)
	}
	return fmt.Sprintf("%.3g J", j)
}
