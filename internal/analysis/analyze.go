package analysis

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/report"
)

// Analyze computes the analysis section of a bench report: the machine
// peaks (flags, then the report's own, then the per-machine cache, then the
// microbenchmark when the report was recorded on this machine), the
// per-operator roofline of the profiled run, the findings of the rule set
// and the energy efficiency. What it cannot do is said in the result's
// Notes, not returned as an error: only a cancelled ctx is an error. It
// does not modify rep.
func Analyze(ctx context.Context, rep *report.Report, c Config) (*report.Analysis, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cfg := newConfig(c)
	a := &report.Analysis{Notes: append([]string(nil), cfg.warnings...)}
	peaks, err := resolvePeaks(ctx, rep, cfg, a)
	if err != nil {
		return nil, err
	}
	a.Peaks = peaks
	threads := rep.Config.IntraOpThreads
	a.Roofline = RooflineThreads(rep.Operators, peaks, threads)
	if threads > 1 && peaks != nil && len(peaks.Levels) > 0 {
		a.Notes = append(a.Notes, fmt.Sprintf("the model ran on %d intra-op threads: its nodes are compared with the bandwidth roofs measured on ONNX Runtime's default threads (the microbenchmark measures 1 thread and the default)", threads))
	}
	if peaks != nil && a.Roofline != nil {
		if rate, node := fastestCompute(a.Roofline); rate > peaks.FLOPsPerS {
			if peaks.FLOPsSource == SourceFlag {
				a.Notes = append(a.Notes, fmt.Sprintf("node %s reached %.1f GFLOP/s, above --peak-flops %.1f GFLOP/s: its roof share is above 1", node, rate/1e9, peaks.FLOPsPerS/1e9))
			} else {
				// An observed rate above the peak proves the peak too low
				// (the microbenchmark ran while other processes were busy):
				// the tightest roof the data allows is the observed rate.
				a.Notes = append(a.Notes, fmt.Sprintf("compute roof raised from the microbenchmark's %.1f GFLOP/s to %.1f GFLOP/s, which node %s reached in the profiled run (the machine was likely busy during the microbenchmark; rerun with --remeasure-peaks on an idle machine)", peaks.FLOPsPerS/1e9, rate/1e9, node))
				peaks.FLOPsPerS, peaks.FLOPsSource = rate, SourceProfile
				peaks.Ridge = peaks.FLOPsPerS / peaks.BytesPerS
				a.Roofline = RooflineThreads(rep.Operators, peaks, threads)
			}
		}
	}
	if a.Roofline == nil {
		a.Notes = append(a.Notes, "no roofline: the run has no operator profile (run bench with --profile-runs 1 or more)")
	}
	if rep.Operators != nil {
		a.Providers = Placement(rep.Runtime.Providers, rep.Operators.Timeline)
	}
	a.Findings = linkTune(rep, Findings(FactsFrom(rep, a.Roofline, peaks)))
	setChecks(a.Findings, rep)

	readings, reason := energyReadings(rep.Hardware)
	var flops *float64
	if a.Roofline != nil && a.Roofline.KnownNodes > 0 {
		flops = ptr(a.Roofline.FLOPs)
	}
	a.Energy = Energy(readings, reason, inferencesOf(rep), flops, cfg.gridIntensity, cfg.gridSource)
	return a, nil
}

// resolvePeaks finds the machine peaks for rep. Flags win; otherwise the
// peaks already in the report (a re-analysis), the cache, or a fresh
// measurement.
func resolvePeaks(ctx context.Context, rep *report.Report, cfg *config, a *report.Analysis) (*report.Peaks, error) {
	key := MachineKey(rep.Host.CPUModel, rep.Host.LogicalCPUs, rep.Runtime.ORTVersion)
	var p *report.Peaks
	if cfg.PeakFLOPs <= 0 || cfg.PeakBandwidth <= 0 {
		p = basePeaks(ctx, rep, cfg, key, a)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if cfg.PeakFLOPs > 0 || cfg.PeakBandwidth > 0 {
		if p == nil {
			p = &report.Peaks{Machine: key}
		}
		if cfg.PeakFLOPs > 0 {
			p.FLOPsPerS, p.FLOPsSource = cfg.PeakFLOPs, SourceFlag
		}
		if cfg.PeakBandwidth > 0 {
			p.BytesPerS, p.BytesSource = cfg.PeakBandwidth, SourceFlag
			if len(p.Levels) > 0 {
				a.Notes = append(a.Notes, "--peak-bw replaces the measured per-level bandwidth roofs: every node is compared with its one roof")
			}
			p.Levels = nil
		}
	}
	if p == nil || p.FLOPsPerS <= 0 || p.BytesPerS <= 0 {
		if p != nil {
			a.Notes = append(a.Notes, "peaks incomplete: give both --peak-flops and --peak-bw when the microbenchmark cannot run")
		}
		return nil, nil
	}
	p.Ridge = p.FLOPsPerS / p.BytesPerS
	return p, nil
}

func basePeaks(ctx context.Context, rep *report.Report, cfg *config, key string, a *report.Analysis) *report.Peaks {
	if cfg.Remeasure {
		return measurePeaks(ctx, cfg, key, a)
	}
	if rep.Analysis != nil && rep.Analysis.Peaks != nil && rep.Analysis.Peaks.FLOPsPerS > 0 && rep.Analysis.Peaks.BytesPerS > 0 {
		p := *rep.Analysis.Peaks
		return &p
	}
	if p, err := LoadPeaks(cfg.CacheDir, key); err == nil {
		if len(p.Levels) == 0 && !strings.HasSuffix(p.Caches, noKnee+"): one bandwidth roof, measured at a DRAM-sized working set") && cfg.measure {
			// Cached before per-level roofs existed, or before CPUID and
			// the sweep could find the caches sysfs lacks: measure them
			// when this is the machine, else keep the one roof.
			if m := measurePeaks(ctx, cfg, key, &report.Analysis{}); m != nil {
				a.Notes = append(a.Notes, "the cached peaks had one bandwidth roof: measured the per-level roofs")
				return m
			}
		}
		return &p
	} else if !errors.Is(err, fs.ErrNotExist) {
		a.Notes = append(a.Notes, err.Error()+"; measuring again")
	}
	if rep.FromProfile() && rep.Host.LogicalCPUs == 0 {
		a.Notes = append(a.Notes, "no roofline classification: the profile does not say which machine ran it; give --model FILE.onnx when it ran on this machine (its peaks are then used), or --peak-flops and --peak-bw")
		return nil
	}
	if !cfg.measure {
		a.Notes = append(a.Notes, "no roofline classification: no cached peaks for this machine and measuring is off; pass --peak-flops and --peak-bw")
		return nil
	}
	return measurePeaks(ctx, cfg, key, a)
}

// measurePeaks runs the microbenchmark when this is the machine of key,
// caches the result and returns the cache's (highest) peaks.
func measurePeaks(ctx context.Context, cfg *config, key string, a *report.Analysis) *report.Peaks {
	if _, err := ortlib.Init(); err != nil {
		a.Notes = append(a.Notes, "no roofline classification: the peak microbenchmark needs ONNX Runtime: "+err.Error())
		return nil
	}
	if here := MachineKey(cpuModel(), runtime.NumCPU(), ort.GetVersion()); here != key {
		a.Notes = append(a.Notes, fmt.Sprintf("no roofline classification: the run was recorded on another machine (%s, this is %s) and no peaks are cached for it; pass --peak-flops and --peak-bw", key, here))
		return nil
	}
	cfg.progressf("measuring machine peaks (once per machine; cached in %s)", PeaksCachePath(cfg.CacheDir, key))
	p, err := MeasurePeaks(ctx, Config{HostRoot: cfg.HostRoot})
	if err != nil {
		if ctx.Err() == nil {
			a.Notes = append(a.Notes, "no roofline classification: "+err.Error())
		}
		return nil
	}
	p.Machine = key
	if err := SavePeaks(cfg.CacheDir, key, p); err != nil {
		a.Notes = append(a.Notes, "peaks not cached: "+err.Error())
	} else if c, err := LoadPeaks(cfg.CacheDir, key); err == nil {
		// The cache keeps the highest measurement of this machine.
		p.FLOPsPerS, p.BytesPerS, p.Levels = c.FLOPsPerS, c.BytesPerS, c.Levels
	}
	p.Ridge = p.FLOPsPerS / p.BytesPerS
	return &p
}

// minRateDur is the shortest operator duration whose achieved FLOP/s may
// raise the compute roof: the profiler's timestamps are in microseconds.
const minRateDur = 200e-6

// fastestCompute returns the highest FLOP/s an arithmetic operator (not an
// element-wise one, whose FLOPs are small) reached, and its name.
func fastestCompute(r *report.Roofline) (float64, string) {
	best, name := 0.0, ""
	for _, op := range r.Ops {
		switch op.Class {
		case ClassMatMul, ClassConv, ClassConvTranspose, ClassAttention:
		default:
			continue
		}
		if op.DurS >= minRateDur && op.FLOPsPerS != nil && *op.FLOPsPerS > best {
			best, name = *op.FLOPsPerS, op.Name
		}
	}
	return best, name
}

func cpuModel() string {
	if infos, err := cpu.Info(); err == nil && len(infos) > 0 {
		return infos[0].ModelName
	}
	return ""
}
