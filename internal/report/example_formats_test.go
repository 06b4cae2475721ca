package report_test

import (
	"os"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// Export a run's latencies as CSV, one row per measured run.
func ExampleWriteCSV() {
	samples := []float64{0.0102, 0.0099, 0.0121}
	r := &report.Report{Latency: report.Latency{Summary: stats.Summarize(samples), Samples: samples}}
	if err := report.WriteCSV(os.Stdout, r, report.CSVSamples); err != nil {
		panic(err)
	}
	// Output:
	// run,latency_s
	// 0,0.0102
	// 1,0.0099
	// 2,0.0121
}

// The analysis section in a terminal: energy that could not be measured
// says why.
func ExampleWriteAnalysisText() {
	r := &report.Report{Analysis: &report.Analysis{
		Findings: []report.Finding{},
		Energy: report.Energy{Reason: "no RAPL under /sys/class/powercap and no NVIDIA GPU",
			Carbon: report.Carbon{GridIntensity: 480, GridSource: "default"}},
	}}
	if err := report.WriteAnalysisText(os.Stdout, r); err != nil {
		panic(err)
	}
	// Output:
	//
	// Findings (0)
	//   none: no rule fired
	//
	// Energy
	//   unavailable: no RAPL under /sys/class/powercap and no NVIDIA GPU
	//   carbon         not estimated without energy; grid intensity 480 gCO2e/kWh (default)
}
