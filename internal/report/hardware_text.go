package report

import (
	"fmt"
	"strings"
)

// writeHardwareText renders the hardware section.
func writeHardwareText(p *printer, h *Hardware) {
	if h == nil {
		return
	}
	p.f("\nHardware (measured phase, %s, sampled every %s)\n", dur(h.WallS), dur(h.IntervalS))
	if c := h.CPU; c != nil {
		p.f("  CPU        utilization mean %s, max %s (%d logical CPUs)\n", pct(c.UtilizationMean), pct(c.UtilizationMax), c.LogicalCPUs)
	}
	if pr := h.Process; pr != nil {
		p.f("  process    peak RSS %s, CPU mean %s, max %s\n", bytesHuman(int64(pr.PeakRSSBytes)), pct(pr.CPUUtilizationMean), pct(pr.CPUUtilizationMax))
	}
	if m := h.Memory; m != nil {
		p.f("  memory     max used %s of %s\n", bytesHuman(int64(m.UsedMaxBytes)), bytesHuman(int64(m.TotalBytes)))
	}
	for _, g := range h.GPUs {
		p.f("  GPU %-6s %s: utilization mean %s, max %s", g.Name, orDash(g.Model), pct(g.UtilizationMean), pct(g.UtilizationMax))
		if g.PowerMaxW > 0 {
			p.f("; power mean %.0f W, max %.0f W", g.PowerMeanW, g.PowerMaxW)
		}
		p.f("\n")
	}
	for i, t := range h.Temperatures {
		if i == 0 {
			p.f("  temperature")
		} else {
			p.f("             ")
		}
		p.f(" %s max %.0f °C\n", t.Name, t.MaxCelsius)
	}
	if len(h.Energy) == 0 {
		p.f("  energy     unavailable: %s\n", h.EnergyUnavailable)
	}
	for i, e := range h.Energy {
		label := "  energy    "
		if i > 0 {
			label = "            "
		}
		sub := ""
		if e.Parent != "" {
			sub = ", part of " + e.Parent
		}
		p.f("%s %s (%s, %s%s): %.2f J, %s per inference, mean %.1f W, max %.1f W", label, e.Name, e.Type, e.Source, sub,
			e.Joules, joules(e.JoulesPerInference), e.PowerMeanW, e.PowerMaxW)
		if e.IdlePowerW != nil {
			p.f(", idle %.1f W", *e.IdlePowerW)
		}
		p.f("\n")
	}
	for _, e := range h.ReadErrors {
		p.f("  read error %s\n", e)
	}
	var on, off []string
	for _, s := range h.Sources {
		if s.Available {
			on = append(on, s.Source)
		} else {
			off = append(off, s.Source)
		}
	}
	p.f("  sources    %s", strings.Join(on, ", "))
	if len(off) > 0 {
		p.f("; not available here: %s (ortel doctor says why)", strings.Join(off, ", "))
	}
	p.f("\n")
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
