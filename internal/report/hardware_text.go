package report

import (
	"strings"

	"github.com/ortel-dev/ortel/internal/units"
)

// writeHardwareText renders the hardware section.
func writeHardwareText(p *printer, h *Hardware) {
	if h == nil {
		return
	}
	p.f("\nHardware (measured phase, %s, sampled every %s)\n", units.Duration(h.WallS), units.Duration(h.IntervalS))
	if c := h.CPU; c != nil {
		p.f("  CPU        utilization mean %s, max %s (%d logical CPUs)\n", units.Percent(c.UtilizationMean, 1), units.Percent(c.UtilizationMax, 1), c.LogicalCPUs)
	}
	if pr := h.Process; pr != nil {
		p.f("  process    peak RSS %s, CPU mean %s, max %s\n", units.Bytes(int64(pr.PeakRSSBytes)), units.Percent(pr.CPUUtilizationMean, 1), units.Percent(pr.CPUUtilizationMax, 1))
	}
	if m := h.Memory; m != nil {
		p.f("  memory     max used %s of %s\n", units.Bytes(int64(m.UsedMaxBytes)), units.Bytes(int64(m.TotalBytes)))
	}
	for _, g := range h.GPUs {
		p.f("  GPU %-6s %s: utilization mean %s, max %s", g.Name, orDash(g.Model), units.Percent(g.UtilizationMean, 1), units.Percent(g.UtilizationMax, 1))
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
			e.Joules, units.Energy(e.JoulesPerInference), e.PowerMeanW, e.PowerMaxW)
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
