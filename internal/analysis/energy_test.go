package analysis

import (
	"strings"
	"testing"
)

func TestEnergy(t *testing.T) {
	idlePkg, idleDram := 10.0, 2.0
	readings := []EnergyReading{
		// 100 inferences over 2 s: package 60 J (30 W avg), 10 W idle.
		{Name: "package-0", Type: "cpu", ID: "rapl:0", Joules: 60, DurationS: 2, IdleW: &idlePkg, MaxW: 41, InTotal: true},
		// dram 8 J (4 W), 2 W idle.
		{Name: "dram", Type: "memory", ID: "rapl:0:0", Joules: 8, DurationS: 2, IdleW: &idleDram, MaxW: 5, InTotal: true},
		// psys contains both: reported, not added.
		{Name: "psys", Type: "system", ID: "rapl:1", Joules: 90, DurationS: 2, MaxW: 50},
	}
	flops := 2e9 // per inference
	e := Energy(readings, "", 100, &flops, 400, "test grid")
	if !e.Available || e.Reason != "" {
		t.Fatalf("energy unavailable: %+v", e)
	}
	// (60+8)/100 = 0.68 J per inference; dynamic (60-20 + 8-4)/100 = 0.44 J.
	if !near(e.JoulesPerInference, 0.68) || !near(*e.DynamicJoulesPerInference, 0.44) || !near(e.InferencesPerJoule, 100/68.0) {
		t.Errorf("per inference: %g J, dynamic %g J, %g/J", e.JoulesPerInference, *e.DynamicJoulesPerInference, e.InferencesPerJoule)
	}
	if !near(e.AvgW, 34) || !near(e.MaxW, 46) {
		t.Errorf("power avg %g max %g, want 34 and 46", e.AvgW, e.MaxW)
	}
	// 2 GFLOP / 0.68 J = 2.94 GFLOP/s per W.
	if e.GFLOPsPerWatt == nil || !near(*e.GFLOPsPerWatt, 2/0.68) {
		t.Errorf("GFLOP/s per W = %v", deref(e.GFLOPsPerWatt))
	}
	// 0.68 J = 0.68/3.6e6 kWh; at 400 g/kWh: 7.556e-5 g.
	if g := e.Carbon.GramsPerInference; g == nil || !near(*g, 0.68/3.6e6*400) || !near(*e.Carbon.GramsPer1000, 1000**g) {
		t.Errorf("carbon = %v", deref(g))
	}
	if e.Carbon.GridIntensity != 400 || e.Carbon.GridSource != "test grid" {
		t.Errorf("grid: %+v", e.Carbon)
	}
	if len(e.Sources) != 3 || e.Sources[2].InTotal || !near(e.Sources[0].AvgW, 30) || !near(*e.Sources[0].DynamicJoulesPerInference, 0.4) {
		t.Errorf("sources: %+v", e.Sources)
	}

	// No idle baseline for one counted source: no dynamic total.
	readings[1].IdleW = nil
	if e := Energy(readings, "", 100, nil, 400, "g"); e.DynamicJoulesPerInference != nil || e.GFLOPsPerWatt != nil {
		t.Errorf("dynamic %v, GFLOP/s/W %v without baseline/FLOPs", deref(e.DynamicJoulesPerInference), deref(e.GFLOPsPerWatt))
	}
}

func TestEnergyUnavailable(t *testing.T) {
	tests := []struct {
		name     string
		readings []EnergyReading
		reason   string
		runs     int
		want     string
	}{
		{"no source", nil, "no RAPL under /sys/class/powercap and no NVIDIA GPU", 10, "no RAPL"},
		{"no reason given", nil, "", 10, "no energy source was read"},
		{"no runs", []EnergyReading{{Name: "p", Joules: 1, InTotal: true}}, "", 0, "no successful inference"},
		{"zero energy", []EnergyReading{{Name: "p", Joules: 0, DurationS: 1, InTotal: true}}, "", 10, "read no energy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Energy(tt.readings, tt.reason, tt.runs, nil, DefaultGridIntensity, DefaultGridSource)
			if e.Available || !strings.Contains(e.Reason, tt.want) {
				t.Errorf("energy = %+v, want unavailable with %q", e, tt.want)
			}
			if e.JoulesPerInference != 0 || e.Carbon.GramsPerInference != nil {
				t.Errorf("numbers reported without energy: %+v", e)
			}
			if e.Carbon.GridIntensity != DefaultGridIntensity {
				t.Errorf("grid intensity %g", e.Carbon.GridIntensity)
			}
		})
	}
}
