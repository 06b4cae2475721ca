package analysis

import (
	"github.com/ortel-dev/ortel/internal/report"
)

// EnergyReading is one component's energy over the measured phase, as the
// hardware section of a report provides it.
type EnergyReading struct {
	Name string
	Type string // hw.type: cpu, gpu, memory, system, ...
	ID   string
	// Joules is the energy over the measured phase, DurationS its length.
	Joules    float64
	DurationS float64
	// IdleW is the idle baseline power measured before the run; nil when
	// none was measured.
	IdleW *float64
	// AvgW and MaxW are the power over the measured phase; AvgW defaults
	// to Joules / DurationS.
	AvgW, MaxW float64
	// InTotal is false for a component contained in another one (RAPL
	// dram within package), so the total does not count it twice.
	InTotal bool
}

// Energy computes energy efficiency from the readings of the measured
// phase: joules per inference (total and above the idle baseline),
// inferences per joule, power, GFLOP/s per watt (flopsPerInference nil when
// unknown) and carbon at gridIntensity gCO2e/kWh. With no readings the
// result says energy is unavailable, and why (reason).
func Energy(readings []EnergyReading, reason string, inferences int, flopsPerInference *float64, gridIntensity float64, gridSource string) report.Energy {
	e := report.Energy{Inferences: inferences, Carbon: report.Carbon{GridIntensity: gridIntensity, GridSource: gridSource}}
	if len(readings) == 0 || inferences <= 0 {
		e.Reason = reason
		if len(readings) > 0 {
			e.Reason = "no successful inference in the measured phase to divide the energy by"
		}
		if e.Reason == "" {
			e.Reason = "no energy source was read"
		}
		return e
	}
	n := float64(inferences)
	var total, dyn float64
	haveDyn := true
	anyTotal := false
	for _, r := range readings {
		s := report.EnergySource{Name: r.Name, Type: r.Type, ID: r.ID, Joules: r.Joules, JoulesPerInference: r.Joules / n,
			AvgW: r.AvgW, MaxW: r.MaxW, InTotal: r.InTotal, IdleW: r.IdleW}
		if s.AvgW == 0 && r.DurationS > 0 {
			s.AvgW = r.Joules / r.DurationS
		}
		var d *float64
		if r.IdleW != nil && r.DurationS > 0 {
			d = ptr(max(r.Joules-*r.IdleW*r.DurationS, 0) / n)
			s.DynamicJoulesPerInference = d
		}
		if r.InTotal {
			anyTotal = true
			total += r.Joules
			e.AvgW += s.AvgW
			e.MaxW += max(s.MaxW, s.AvgW) // an upper bound: the components' maxima need not coincide
			if d == nil {
				haveDyn = false
			} else {
				dyn += *d
			}
		}
		e.Sources = append(e.Sources, s)
	}
	if !anyTotal || total <= 0 {
		e.Reason = "the energy sources read no energy over the measured phase"
		return e
	}
	e.Available = true
	e.JoulesPerInference = total / n
	e.InferencesPerJoule = n / total
	if haveDyn {
		e.DynamicJoulesPerInference = ptr(dyn)
	}
	if flopsPerInference != nil && *flopsPerInference > 0 {
		// FLOP per joule is FLOP/s per watt.
		e.GFLOPsPerWatt = ptr(*flopsPerInference / e.JoulesPerInference / 1e9)
	}
	g := e.JoulesPerInference / 3.6e6 * gridIntensity
	e.Carbon.GramsPerInference = ptr(g)
	e.Carbon.GramsPer1000 = ptr(1000 * g)
	return e
}
