package report_test

import (
	"context"
	"encoding/json"
	"flag"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/test/testenv"
)

// The in-package tests define -update; it is defined here only when they
// are not compiled in.
var _ = func() bool {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite the golden files under testdata")
	}
	return true
}()

// updating reports whether -update was given.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// realReport is a real `ortel bench paddleocr-det` run on this project's
// 2-core build machine, analyzed (testdata/det_report.json.gz).
func realReport(t testing.TB) *report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal(testenv.Gunzip(t, "testdata/det_report.json.gz"), &r); err != nil {
		t.Fatal(err)
	}
	if r.Analysis == nil || r.Analysis.Roofline == nil || len(r.Operators.Timeline) == 0 {
		t.Fatal("fixture lacks analysis or timeline")
	}
	return &r
}

// syntheticReport is a small deterministic report with every section the
// renderers draw: timeline, analysis with energy, warm-up, batch sweep.
func syntheticReport(t testing.TB) *report.Report {
	t.Helper()
	var samples []float64
	for i := range 120 {
		samples = append(samples, 0.010+0.0002*float64(i%23)+0.004*float64(i%40/39))
	}
	node := func(name, op string, start, dur float64, in, out []string, act, par, outB int64) report.NodeTiming {
		return report.NodeTiming{Name: name, OpType: op, Provider: "CPUExecutionProvider", StartS: start, DurS: dur,
			InputShapes: in, OutputShapes: out, ActivationSize: act, ParameterSize: par, OutputSize: outB, Threads: 2, Imbalance: 1}
	}
	tl := []report.NodeTiming{
		node("conv_0", "Conv", 0, 0.002, []string{"float[1,3,64,64]", "float[16,3,3,3]", "float[16]"}, []string{"float[1,16,64,64]"}, 49152, 1792, 262144),
		node("add_0", "Add", 0.0021, 0.0005, []string{"float[1,16,64,64]", "float[1]"}, []string{"float[1,16,64,64]"}, 262144, 4, 262144),
		node("clip_0", "Clip", 0.0027, 0.0004, []string{"float[1,16,64,64]", "float[]", "float[]"}, []string{"float[1,16,64,64]"}, 262144, 8, 262144),
		node("mul_0", "Mul", 0.0032, 0.0004, []string{"float[1,16,64,64]", "float[1,16,64,64]"}, []string{"float[1,16,64,64]"}, 524288, 0, 262144),
		node("reorder", "ReorderOutput", 0.0037, 0.0006, []string{"float[1,16,64,64]"}, []string{"float[1,16,64,64]"}, 262144, 0, 262144),
		node("mm_0", "MatMul", 0.0044, 0.003, []string{"float[64,256]", "float[256,256]"}, []string{"float[64,256]"}, 65536, 262144, 65536),
		node("resize_0", "Resize", 0.0075, 0.001, []string{"float[1,16,64,64]", "float[0]", "float[4]"}, []string{"float[1,16,128,128]"}, 262144, 16, 1048576),
	}
	r := &report.Report{
		SchemaVersion: report.SchemaVersion,
		Tool:          report.Tool{Name: "ortel", Version: "test"},
		CreatedAt:     time.Date(2026, 11, 22, 10, 31, 7, 0, time.UTC),
		Host:          report.Host{Hostname: "h", OS: "linux", Arch: "amd64", CPUModel: "Test CPU | 9000", LogicalCPUs: 2, GoVersion: "go1.26"},
		Runtime:       report.Runtime{ORTVersion: "1.24.3", Providers: []string{"CPUExecutionProvider"}},
		Model: report.Model{Name: "synthetic_<model>", Path: "/models/synthetic.onnx", SizeBytes: 12345, SHA256: "0123456789abcdef0123",
			Inputs: []report.Tensor{{Name: "x", Type: "float", Declared: []int64{-1, 3, -1, -1}, Shape: []int64{1, 3, 64, 64}}}},
		Config:     report.Config{Runs: 120, Warmup: 5, Batch: 1, ProfileRuns: 1, Seed: 1},
		Session:    report.Session{CreationS: 0.25, FirstRunS: 0.09},
		Latency:    report.Latency{Summary: stats.Summarize(samples), Samples: samples},
		Throughput: report.Throughput{RunsPerS: 90, ItemsPerS: 90, WallS: 1.33},
		Operators: &report.Operators{ProfiledRuns: 1, Nodes: len(tl), NodesByProvider: map[string]int{"CPUExecutionProvider": len(tl)}, TotalS: 0.0085,
			ByType: []report.OpType{{OpType: "MatMul", Provider: "CPUExecutionProvider", Calls: 1, TotalS: 0.003, Share: 0.35, MeanS: 0.003},
				{OpType: "Conv", Provider: "CPUExecutionProvider", Calls: 1, TotalS: 0.002, Share: 0.24, MeanS: 0.002},
				{OpType: "Resize", Provider: "CPUExecutionProvider", Calls: 1, TotalS: 0.001, Share: 0.12, MeanS: 0.001}},
			Timeline: tl},
		Warmup: &report.Warmup{Mode: "auto", Runs: 8, CurveS: []float64{0.09, 0.03, 0.015, 0.011, 0.0105, 0.0101, 0.0102, 0.0100, 0.0101},
			Method: "rolling-median stability", Window: 2, Tolerance: 0.05, Steady: true, SteadyAfterRuns: 3, SteadyS: 0.135, SteadyMedianS: 0.0101},
		BatchSweep: &report.BatchSweep{ReferenceBatch: 1, BestBatch: 4, BestRule: "highest items/s", Steps: []report.BatchStep{
			{Batch: 1, Latency: stats.Summary{P50: 0.010, P99: 0.012}, RunsPerS: 90, ItemsPerS: 90, Speedup: 1, Efficiency: 1},
			{Batch: 2, Latency: stats.Summary{P50: 0.015, P99: 0.018}, RunsPerS: 62, ItemsPerS: 124, Speedup: 1.38, Efficiency: 0.69},
			{Batch: 4, Latency: stats.Summary{P50: 0.025, P99: 0.029}, RunsPerS: 38, ItemsPerS: 152, Speedup: 1.69, Efficiency: 0.42},
		}},
		Telemetry: report.Telemetry{Mode: "file"},
	}
	idle := 4.0
	hw := &report.Hardware{IntervalS: 0.1, WallS: 1.33, Inferences: len(samples),
		Sources: []report.HardwareSource{{Source: "cpu", Available: true}, {Source: "rapl", Available: true}, {Source: "nvml", Reason: "no NVIDIA driver"}},
		CPU:     &report.CPUUsage{LogicalCPUs: 2, UtilizationMean: 0.93, UtilizationMax: 1},
		Process: &report.ProcessUsage{PeakRSSBytes: 180 << 20, CPUUtilizationMean: 0.9, CPUUtilizationMax: 0.99},
		Energy: []report.EnergyUse{
			{Source: "rapl", ID: "intel-rapl:0", Name: "package-0", Type: "cpu", Joules: 20, PowerMeanW: 15.04, PowerMaxW: 19, IdlePowerW: &idle},
			{Source: "rapl", ID: "intel-rapl:0:0", Name: "package-0/dram", Type: "memory", Parent: "intel-rapl:0", Joules: 2, PowerMeanW: 1.5, PowerMaxW: 2.1},
		},
		Temperatures: []report.TemperatureMax{{ID: "thermal_zone0", Name: "x86_pkg_temp", MaxCelsius: 71}},
	}
	for i := range 14 {
		cpu, proc := 0.85+0.01*float64(i%5), 0.8+0.01*float64(i%7)
		hw.Series = append(hw.Series, report.HardwareSample{TS: 0.1 * float64(i), CPUUtilization: &cpu, ProcessCPU: &proc, RSSBytes: uint64(170+i) << 20,
			PowerW: map[string]float64{"intel-rapl:0": 14 + float64(i%4), "intel-rapl:0:0": 1.5}})
	}
	r.Hardware = hw
	a, err := analysis.Analyze(context.Background(), r, analysis.Config{PeakFLOPs: 100e9, PeakBandwidth: 10e9, GridIntensity: 300})
	if err != nil {
		t.Fatal(err)
	}
	r.Analysis = a
	return r
}
