package analysis

import "github.com/ortel-dev/ortel/internal/report"

// This file reads the report sections other packages fill — the load
// scenarios (warm-up, jitter, batch sweep) and the hardware readings — into
// Facts and energy readings. A section that is absent leaves its facts nil,
// and the rules that need them stay silent.

// loadFacts takes warm-up, jitter and batch-sweep facts from the load
// scenario sections.
func loadFacts(f *Facts, rep *report.Report) {
	if w := rep.Warmup; w != nil && len(w.CurveS) > 0 {
		runs := w.Runs + 1 // the first run plus the warm-up runs: never settled within them
		if w.Steady {
			runs = w.SteadyAfterRuns
			if w.SteadyMedianS > 0 {
				f.WarmupExcessS = ptr(max(w.SteadyS-float64(w.SteadyAfterRuns)*w.SteadyMedianS, 0))
			}
		}
		f.RunsToStable = &runs
	}
	if j := rep.Jitter; j != nil {
		n := j.OutlierCount
		f.Outliers = &n
	}
	if b := rep.BatchSweep; b != nil {
		f.BestBatch = b.BestBatch
		for _, s := range b.Steps {
			f.Batches = append(f.Batches, BatchPoint{Batch: s.Batch, ItemsPerS: s.ItemsPerS, P50S: s.Latency.P50, P99S: s.Latency.P99})
		}
	}
}

// hardwareFacts takes utilization facts from the hardware section: the
// host's mean CPU utilization and the busiest GPU's mean utilization. The
// section has no throttle reasons, temperature limits or CPU frequencies
// yet, so the thermal-throttling rule has nothing to read from it.
func hardwareFacts(f *Facts, h *report.Hardware) {
	if h == nil {
		return
	}
	if h.CPU != nil {
		f.CPUUtilization = ptr(h.CPU.UtilizationMean)
	}
	for _, g := range h.GPUs {
		if f.GPUUtilization == nil || g.UtilizationMean > *f.GPUUtilization {
			f.GPUUtilization = ptr(g.UtilizationMean)
		}
	}
}

// energyReadings returns the energy counters of the hardware section, or
// the reason there are none. A counter with a parent (RAPL dram inside its
// package) is not added to the total; nor are RAPL packages and their
// parts when a platform counter (psys, hw.type enclosure) covers them.
func energyReadings(h *report.Hardware) ([]EnergyReading, string) {
	if h == nil {
		return nil, "the report has no hardware section: hardware was not sampled during the measured phase"
	}
	if len(h.Energy) == 0 {
		if h.EnergyUnavailable != "" {
			return nil, h.EnergyUnavailable
		}
		return nil, "no energy counter was readable during the measured phase"
	}
	platform := false
	for _, e := range h.Energy {
		if e.Source == "rapl" && e.Type == "enclosure" && e.Parent == "" {
			platform = true
		}
	}
	out := make([]EnergyReading, 0, len(h.Energy))
	for _, e := range h.Energy {
		in := e.Parent == ""
		if platform && e.Source == "rapl" && e.Type != "enclosure" {
			in = false
		}
		out = append(out, EnergyReading{
			Name: e.Name, Type: e.Type, ID: e.ID,
			Joules: e.Joules, DurationS: h.WallS,
			IdleW: e.IdlePowerW, AvgW: e.PowerMeanW, MaxW: e.PowerMaxW,
			InTotal: in,
		})
	}
	return out, ""
}

// inferencesOf is the number of runs the energy is divided by: the hardware
// section's count of the sampled phase, else the measured runs.
func inferencesOf(rep *report.Report) int {
	if rep.Hardware != nil && rep.Hardware.Inferences > 0 {
		return rep.Hardware.Inferences
	}
	return rep.Latency.Count
}
