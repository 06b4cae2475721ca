package analysis

import (
	"context"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// hardwareSection is what the sampler reports on a machine with RAPL (a
// package with its dram subzone) and one NVIDIA GPU, over 2 s and 100 runs.
func hardwareSection() *report.Hardware {
	idlePkg, idleGPU := 12.0, 60.0
	return &report.Hardware{
		IntervalS: 0.1, WallS: 2, Inferences: 100,
		CPU:  &report.CPUUsage{LogicalCPUs: 8, UtilizationMean: 0.35, UtilizationMax: 0.9},
		GPUs: []report.GPUUsage{{ID: "gpu-0", Name: "H100", UtilizationMean: 0.22, UtilizationMax: 0.6}, {ID: "gpu-1", Name: "H100", UtilizationMean: 0.05}},
		Energy: []report.EnergyUse{
			{Source: "rapl", ID: "intel-rapl:0", Name: "package-0", Type: "cpu", Joules: 80, PowerMeanW: 40, PowerMaxW: 55, IdlePowerW: &idlePkg},
			{Source: "rapl", ID: "intel-rapl:0:0", Name: "package-0/dram", Type: "memory", Parent: "intel-rapl:0", Joules: 10, PowerMeanW: 5, PowerMaxW: 6},
			{Source: "nvml", ID: "gpu-0", Name: "H100", Type: "gpu", Joules: 300, PowerMeanW: 150, PowerMaxW: 220, IdlePowerW: &idleGPU},
		},
	}
}

func TestEnergyFromHardwareSection(t *testing.T) {
	rep := fixtureReport()
	rep.Hardware = hardwareSection()
	a, err := Analyze(context.Background(), rep, Config{PeakFLOPs: 1e12, PeakBandwidth: 1e11})
	if err != nil {
		t.Fatal(err)
	}
	e := a.Energy
	// Package 80 J + GPU 300 J (dram is inside the package) over the
	// section's 100 runs: 3.8 J each; above idle (80-24) + (300-120) = 236 J.
	if !e.Available || e.Inferences != 100 || !near(e.JoulesPerInference, 3.8) || !near(*e.DynamicJoulesPerInference, 2.36) {
		t.Fatalf("energy = %+v", e)
	}
	if len(e.Sources) != 3 || e.Sources[1].InTotal || !e.Sources[0].InTotal || !e.Sources[2].InTotal {
		t.Errorf("sources: %+v", e.Sources)
	}
	if !near(e.AvgW, 190) || e.Carbon.GramsPerInference == nil {
		t.Errorf("avg %g W, carbon %v", e.AvgW, e.Carbon)
	}
}

func TestEnergyPlatformCounterCoversPackages(t *testing.T) {
	h := hardwareSection()
	h.Energy = append(h.Energy, report.EnergyUse{Source: "rapl", ID: "intel-rapl:1", Name: "psys", Type: "enclosure", Joules: 120, PowerMeanW: 60})
	r, reason := energyReadings(h)
	if reason != "" {
		t.Fatal(reason)
	}
	var total float64
	for _, x := range r {
		if x.InTotal {
			total += x.Joules
		}
	}
	// psys (120 J) replaces package-0 and its dram; the GPU (300 J) stays.
	if total != 420 {
		t.Errorf("total %g J, want 420: %+v", total, r)
	}
}

func TestEnergyUnavailableReasonFromHardware(t *testing.T) {
	tests := []struct {
		name string
		h    *report.Hardware
		want string
	}{
		{"no section", nil, "no hardware section"},
		{"sampler's reason", &report.Hardware{WallS: 1, EnergyUnavailable: "no energy source on this machine (rapl: /sys/class/powercap does not exist; nvml: no NVIDIA driver)"}, "/sys/class/powercap does not exist"},
		{"no reason given", &report.Hardware{WallS: 1}, "no energy counter was readable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := fixtureReport()
			rep.Hardware = tt.h
			a, _ := Analyze(context.Background(), rep, Config{PeakFLOPs: 1e12, PeakBandwidth: 1e11})
			if a.Energy.Available || !strings.Contains(a.Energy.Reason, tt.want) {
				t.Errorf("energy = %+v, want unavailable because %q", a.Energy, tt.want)
			}
		})
	}
}

func TestHardwareFacts(t *testing.T) {
	rep := fixtureReport()
	rep.Hardware = hardwareSection()
	rep.Runtime.Providers = []string{"CUDAExecutionProvider", cpuEP}
	f := FactsFrom(rep, nil, nil)
	if f.CPUUtilization == nil || *f.CPUUtilization != 0.35 || f.GPUUtilization == nil || *f.GPUUtilization != 0.22 {
		t.Fatalf("facts: cpu %v gpu %v", deref(f.CPUUtilization), deref(f.GPUUtilization))
	}
	// The busiest GPU idled 78% of the phase: the gpu-underused rule fires.
	var fired bool
	for _, fd := range Findings(f) {
		fired = fired || fd.Rule == "gpu-underused"
	}
	if !fired {
		t.Error("gpu-underused did not fire on a GPU busy 22 percent of the time")
	}
	if f := FactsFrom(fixtureReport(), nil, nil); f.CPUUtilization != nil || f.GPUUtilization != nil {
		t.Error("facts without a hardware section")
	}
}
