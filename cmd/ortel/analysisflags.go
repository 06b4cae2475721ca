package main

import (
	"context"
	"io"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

// analysisFlags are the flags of the analysis (roofline peaks, carbon),
// shared by bench and report.
type analysisFlags struct {
	peakFLOPs, peakBW, grid string
	remeasure               bool
}

func (f *analysisFlags) register(fs *flagSet) {
	fs.stringFlag(&f.peakFLOPs, "peak-flops", "RATE", "",
		"machine peak FLOP/s, e.g. 150G (default: measured once per machine by a ~2.5 s ONNX Runtime microbenchmark, cached)")
	fs.stringFlag(&f.peakBW, "peak-bw", "RATE", "",
		"machine peak memory bandwidth in bytes/s, e.g. 20G (default: measured per cache level and DRAM; a value is the one roof)")
	fs.boolFlag(&f.remeasure, "remeasure-peaks", false, "run the peak microbenchmark again (the cache keeps the highest)")
	fs.stringFlag(&f.grid, "grid-intensity", "G", "",
		"grid carbon intensity in gCO2e/kWh (default: ORTEL_GRID_INTENSITY, else 480, the 2023 world average from "+
			"Ember's Global Electricity Review 2024)")
}

// set reports whether any analysis flag was given.
func (f *analysisFlags) set() bool {
	return f.peakFLOPs != "" || f.peakBW != "" || f.grid != "" || f.remeasure
}

// config turns the flags into the analysis Config; a bad value is a usage
// error.
func (f *analysisFlags) config(progress io.Writer) (analysis.Config, error) {
	c := analysis.Config{Remeasure: f.remeasure, Progress: progress}
	if f.peakFLOPs != "" {
		v, err := analysis.ParseRate(f.peakFLOPs)
		if err != nil {
			return c, usagef("--peak-flops: %v", err)
		}
		c.PeakFLOPs = v
	}
	if f.peakBW != "" {
		v, err := analysis.ParseRate(f.peakBW)
		if err != nil {
			return c, usagef("--peak-bw: %v", err)
		}
		c.PeakBandwidth = v
	}
	if f.grid != "" {
		v, err := analysis.ParseGridIntensity(f.grid)
		if err != nil {
			return c, usagef("--grid-intensity: %v", err)
		}
		if v == 0 {
			return c, usagef("--grid-intensity: must be above 0 gCO2e/kWh")
		}
		c.GridIntensity = v
	}
	return c, usage(c.Validate())
}

// analyzeReport computes rep.Analysis. Only a cancelled ctx is an error;
// what the analysis could not do is in its notes.
func analyzeReport(ctx context.Context, rep *report.Report, c analysis.Config) error {
	a, err := analysis.Analyze(ctx, rep, c)
	if err != nil {
		return err
	}
	rep.Analysis = a
	return nil
}

// analyzeAndExport is bench's analysis step, between bench.Run and the
// telemetry shutdown: it computes rep.Analysis and exports it — the
// "analyze <model>" span, linked to the profiled runs (runs recorded their
// span contexts), and the analysis gauges — through tel's providers, so
// they leave with the rest of the run. A failed export is a note in the
// report, not a failed bench.
func analyzeAndExport(ctx context.Context, rep *report.Report, tp trace.TracerProvider, mp metric.MeterProvider, c analysis.Config) error {
	if err := analyzeReport(ctx, rep, c); err != nil {
		return err
	}
	if err := analysis.Export(ctx, rep, analysis.Config{TracerProvider: tp, MeterProvider: mp}); err != nil {
		rep.Analysis.Notes = append(rep.Analysis.Notes, "analysis telemetry: "+err.Error())
	}
	return nil
}

// progressOf is where bench's progress lines go: stderr, or nowhere with
// --quiet.
func progressOf(quiet bool, e *env) io.Writer {
	if quiet {
		return nil
	}
	return prefixWriter{e.stderr, "ortel bench: "}
}
