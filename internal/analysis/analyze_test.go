package analysis

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

const testCPU = "Test CPU 9000"

// fixtureReport is a bench report of a profiled run on an imaginary
// machine: 5 × (Conv, Add, Clip, Mul, Div).
func fixtureReport() *report.Report {
	f := timeline(repeat(5, convNode(1e-3), node("Add", cpuEP, 1e-3), node("Clip", cpuEP, 1e-3), node("Mul", cpuEP, 1e-3), node("Div", cpuEP, 1e-3))...)
	return &report.Report{
		SchemaVersion: report.SchemaVersion,
		Host:          report.Host{CPUModel: testCPU, LogicalCPUs: 4},
		Runtime:       report.Runtime{ORTVersion: "1.24.3", Providers: []string{cpuEP}},
		Model:         report.Model{Name: "fixture"},
		Config:        report.Config{Batch: 1},
		Latency:       report.Latency{Summary: latency(0.01, 0.011, 0.01, 0.0002, 100)},
		Session:       report.Session{CreationS: 0.1, FirstRunS: 0.012},
		Operators:     &report.Operators{ProfiledRuns: 1, Nodes: len(f.Timeline), Timeline: f.Timeline},
	}
}

func notes(a *report.Analysis) string { return strings.Join(a.Notes, "\n") }

func TestAnalyzeWithFlagPeaks(t *testing.T) {
	t.Setenv(EnvGridIntensity, "")
	a, err := Analyze(context.Background(), fixtureReport(), Config{PeakFLOPs: 1e12, PeakBandwidth: 50e9, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if a.Peaks == nil || a.Peaks.FLOPsSource != SourceFlag || a.Peaks.BytesSource != SourceFlag || a.Peaks.Ridge != 20 {
		t.Fatalf("peaks = %+v", a.Peaks)
	}
	if a.Roofline == nil || a.Roofline.Nodes != 25 || a.Roofline.KnownNodes != 25 {
		t.Fatalf("roofline = %+v", a.Roofline)
	}
	if len(a.Findings) == 0 || a.Findings[0].Rule != "memory-bound-hot-ops" {
		t.Errorf("findings = %+v", a.Findings)
	}
	if a.Energy.Available || !strings.Contains(a.Energy.Reason, "no hardware section") || a.Energy.Carbon.GridIntensity != DefaultGridIntensity {
		t.Errorf("energy = %+v", a.Energy)
	}
	if len(a.Notes) != 0 {
		t.Errorf("notes: %s", notes(a))
	}
}

func TestAnalyzePeakSources(t *testing.T) {
	rep := fixtureReport()
	key := MachineKey(testCPU, 4, "1.24.3")
	t.Run("cache", func(t *testing.T) {
		dir := t.TempDir()
		if err := SavePeaks(dir, key, report.Peaks{FLOPsPerS: 2e12, BytesPerS: 1e11}); err != nil {
			t.Fatal(err)
		}
		a, _ := Analyze(context.Background(), rep, Config{CacheDir: dir})
		if a.Peaks == nil || a.Peaks.FLOPsSource != SourceCache || a.Peaks.FLOPsPerS != 2e12 || a.Peaks.Machine != key {
			t.Errorf("peaks = %+v; notes %s", a.Peaks, notes(a))
		}
		// One flag overrides one peak, the other stays cached.
		a, _ = Analyze(context.Background(), rep, Config{CacheDir: dir, PeakBandwidth: 5e10})
		if a.Peaks.BytesSource != SourceFlag || a.Peaks.FLOPsSource != SourceCache || a.Peaks.Ridge != 40 {
			t.Errorf("mixed peaks = %+v", a.Peaks)
		}
	})
	t.Run("cached levels", func(t *testing.T) {
		dir := t.TempDir()
		if err := SavePeaks(dir, key, *levelPeaks()); err != nil {
			t.Fatal(err)
		}
		a, _ := Analyze(context.Background(), rep, Config{CacheDir: dir})
		if a.Peaks == nil || len(a.Peaks.Levels) != 8 || a.Peaks.BytesPerS != 30e9 {
			t.Fatalf("peaks = %+v; notes %s", a.Peaks, notes(a))
		}
		for _, op := range a.Roofline.Ops {
			if op.Roof == "" || op.Roof == LevelMemory || op.RoofThreads == nil {
				t.Errorf("%s placed against %q", op.Name, op.Roof)
			}
		}
		// A model on an explicit thread count other than one is compared
		// with the default-thread roofs, and a note says so.
		r3 := fixtureReport()
		r3.Config.IntraOpThreads = 3
		a3, _ := Analyze(context.Background(), r3, Config{CacheDir: dir})
		if op := a3.Roofline.Ops[0]; op.RoofThreads == nil || *op.RoofThreads != 0 || !strings.Contains(notes(a3), "the model ran on 3 intra-op threads") {
			t.Errorf("3 threads: %+v; notes %s", op.RoofPlacement, notes(a3))
		}
		// --peak-bw is the one roof: the levels go, and a note says so.
		a, _ = Analyze(context.Background(), rep, Config{CacheDir: dir, PeakBandwidth: 5e10})
		if len(a.Peaks.Levels) != 0 || a.Roofline.Ops[0].Roof != LevelMemory || a.Roofline.Ops[0].RoofBytesPerS != 5e10 || !strings.Contains(notes(a), "--peak-bw replaces the measured per-level bandwidth roofs") {
			t.Errorf("flag roof: %+v, op %+v; notes %s", a.Peaks, a.Roofline.Ops[0].RoofPlacement, notes(a))
		}
	})
	t.Run("report", func(t *testing.T) {
		r := fixtureReport()
		r.Analysis = &report.Analysis{Peaks: &report.Peaks{FLOPsPerS: 3e12, BytesPerS: 1e11, FLOPsSource: SourceMeasured, BytesSource: SourceMeasured}}
		a, _ := Analyze(context.Background(), r, Config{CacheDir: t.TempDir()})
		if a.Peaks == nil || a.Peaks.FLOPsPerS != 3e12 || a.Peaks.FLOPsSource != SourceMeasured {
			t.Errorf("re-analysis peaks = %+v", a.Peaks)
		}
	})
	t.Run("another machine", func(t *testing.T) {
		a, _ := Analyze(context.Background(), rep, Config{CacheDir: t.TempDir()})
		if a.Peaks != nil || !strings.Contains(notes(a), "--peak-flops") {
			t.Errorf("peaks %+v; notes %s", a.Peaks, notes(a))
		}
		if a.Roofline == nil || a.Roofline.Ops[0].Bound != BoundUnknown {
			t.Error("roofline without peaks should still place operators, unclassified")
		}
	})
	t.Run("measuring off", func(t *testing.T) {
		a, _ := Analyze(context.Background(), rep, Config{CacheDir: t.TempDir(), NoMeasure: true})
		if a.Peaks != nil || !strings.Contains(notes(a), "measuring is off") {
			t.Errorf("peaks %+v; notes %s", a.Peaks, notes(a))
		}
	})
	t.Run("corrupt cache", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(dir+"/peaks", 0o755)
		os.WriteFile(PeaksCachePath(dir, key), []byte("{not json"), 0o644)
		a, _ := Analyze(context.Background(), rep, Config{CacheDir: dir, NoMeasure: true})
		if !strings.Contains(notes(a), PeaksCachePath(dir, key)) {
			t.Errorf("notes do not name the corrupt cache: %s", notes(a))
		}
	})
}

func TestAnalyzeRaisesComputeRoof(t *testing.T) {
	rep := fixtureReport()
	// The Conv does 302 MFLOP in 1 ms: 302 GFLOP/s, above a 100 GFLOP/s peak.
	dir := t.TempDir()
	SavePeaks(dir, MachineKey(testCPU, 4, "1.24.3"), report.Peaks{FLOPsPerS: 100e9, BytesPerS: 10e9})
	a, _ := Analyze(context.Background(), rep, Config{CacheDir: dir})
	if a.Peaks.FLOPsSource != SourceProfile || a.Peaks.FLOPsPerS < 300e9 || !strings.Contains(notes(a), "raised") {
		t.Errorf("peaks %+v; notes %s", a.Peaks, notes(a))
	}
	for _, op := range a.Roofline.Ops {
		if op.RoofShare != nil && op.Class == ClassConv && *op.RoofShare > 1.0000001 {
			t.Errorf("%s still above its roof: %g", op.Name, *op.RoofShare)
		}
	}
	// A flag is the user's word: kept, with a note.
	a, _ = Analyze(context.Background(), rep, Config{PeakFLOPs: 100e9, PeakBandwidth: 10e9})
	if a.Peaks.FLOPsSource != SourceFlag || !strings.Contains(notes(a), "above --peak-flops") {
		t.Errorf("peaks %+v; notes %s", a.Peaks, notes(a))
	}
}

func TestAnalyzeWithoutOperators(t *testing.T) {
	rep := fixtureReport()
	rep.Operators = nil
	a, err := Analyze(context.Background(), rep, Config{PeakFLOPs: 1e12, PeakBandwidth: 1e11})
	if err != nil {
		t.Fatal(err)
	}
	if a.Roofline != nil || !strings.Contains(notes(a), "--profile-runs") {
		t.Errorf("roofline %+v; notes %s", a.Roofline, notes(a))
	}
	if a.Findings == nil {
		t.Error("findings is nil, want an empty list in JSON")
	}
}

func TestAnalyzeGridIntensity(t *testing.T) {
	tests := []struct {
		env, flag  string
		grid       float64
		want       float64
		wantSource string
		wantNote   string
	}{
		{env: "", want: DefaultGridIntensity, wantSource: "default"},
		{env: "120", want: 120, wantSource: EnvGridIntensity},
		{env: "lots", want: DefaultGridIntensity, wantSource: "default", wantNote: EnvGridIntensity},
		{env: "120", grid: 50, want: 50, wantSource: "--grid-intensity"},
	}
	for _, tt := range tests {
		t.Run(tt.env+tt.wantSource, func(t *testing.T) {
			t.Setenv(EnvGridIntensity, tt.env)
			a, _ := Analyze(context.Background(), fixtureReport(), Config{PeakFLOPs: 1e12, PeakBandwidth: 1e11, GridIntensity: tt.grid})
			c := a.Energy.Carbon
			if c.GridIntensity != tt.want || !strings.Contains(c.GridSource, tt.wantSource) {
				t.Errorf("grid = %+v", c)
			}
			if tt.wantNote != "" && !strings.Contains(notes(a), tt.wantNote) {
				t.Errorf("notes lack %q: %s", tt.wantNote, notes(a))
			}
		})
	}
}

// TestMeasurePeaksThroughAnalyze: for a report recorded here, Analyze runs
// the real microbenchmark through ONNX Runtime, briefly, and caches it.
func TestMeasurePeaksThroughAnalyze(t *testing.T) {
	testenv.RequireORT(t)
	rep := fixtureReport()
	rep.Host = report.Host{CPUModel: cpuModel(), LogicalCPUs: runtime.NumCPU()}
	rep.Runtime.ORTVersion = ort.GetVersion()
	dir := t.TempDir()
	key := MachineKey(rep.Host.CPUModel, rep.Host.LogicalCPUs, rep.Runtime.ORTVersion)
	// A cache written before per-level roofs: one roof, measured again.
	if err := os.MkdirAll(filepath.Dir(PeaksCachePath(dir, key)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(PeaksCachePath(dir, key), []byte(`{"flops_per_s":1e9,"bytes_per_s":1e9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// The caches of a fixture sysfs: L1 4 KiB, L2 16 KiB, L3 64 KiB.
	a, err := Analyze(context.Background(), rep, Config{CacheDir: dir, HostRoot: "testdata/sysfs/tiny"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notes(a), "the cached peaks had one bandwidth roof: measured the per-level roofs") {
		t.Errorf("notes: %s", notes(a))
	}
	took := time.Since(start) // logged: how long is up to the machine (see TestFastestBounds)
	p := a.Peaks
	if p == nil || p.BytesSource != SourceMeasured || p.MeasuredAt == nil || !strings.Contains(p.Method, "working sets L1 2.0 KiB, L2 8.0 KiB, L3 32.0 KiB, DRAM 128.0 KiB and 64.0 MiB") {
		t.Fatalf("peaks %+v; notes %s", p, notes(a))
	}
	// One roof per level and thread count, at half of each cache.
	threads := 2
	if runtime.NumCPU() == 1 {
		threads = 1
	}
	if len(p.Levels) != 4*threads || !strings.Contains(p.Caches, "testdata/sysfs/tiny") {
		t.Fatalf("levels %+v, caches %q", p.Levels, p.Caches)
	}
	for _, l := range p.Levels {
		want := map[string][]int64{"L1": {2 << 10}, "L2": {8 << 10}, "L3": {32 << 10}, "DRAM": {128 << 10, 64 << 20}}[l.Level]
		if l.BytesPerS <= 0 || len(l.WorkingSets) != len(want) || !slices.Contains(l.WorkingSets, l.WorkingSetBytes) {
			t.Errorf("roof %+v: want working sets %v", l, want)
		}
		for i, w := range want {
			if i < len(l.WorkingSets) && (l.WorkingSets[i] > w || l.WorkingSets[i] < w-12) {
				t.Errorf("roof %+v: working set %d, want %d", l, l.WorkingSets[i], w)
			}
		}
		t.Logf("%s roof on %d threads (0: default): %.2f GB/s at %d bytes of %v", l.Level, l.Threads, l.BytesPerS/1e9, l.WorkingSetBytes, l.WorkingSets)
	}
	t.Logf("peaks: %.1f GFLOP/s (%s), %.2f GB/s, ridge %.2f FLOP/B, analysis took %s", p.FLOPsPerS/1e9, p.FLOPsSource, p.BytesPerS/1e9, p.Ridge, took)
	// Sanity bounds of any CPU ONNX Runtime runs on: 0.1 GFLOP/s..100 TFLOP/s, 0.1..10000 GB/s.
	if p.FLOPsPerS < 1e8 || p.FLOPsPerS > 1e14 || p.BytesPerS < 1e8 || p.BytesPerS > 1e13 {
		t.Errorf("implausible peaks %+v", p)
	}
	if c, err := LoadPeaks(dir, key); err != nil || c.BytesPerS != p.BytesPerS || len(c.Levels) != len(p.Levels) {
		t.Errorf("cache: %+v, %v", c, err)
	}
	// The second analysis reads the cache instead of measuring.
	a, _ = Analyze(context.Background(), rep, Config{CacheDir: dir})
	if a.Peaks.BytesSource != SourceCache {
		t.Errorf("second analysis: %+v", a.Peaks)
	}
}

func TestAnalyzeCancelled(t *testing.T) {
	testenv.RequireORT(t)
	rep := fixtureReport()
	rep.Host = report.Host{CPUModel: cpuModel(), LogicalCPUs: runtime.NumCPU()}
	rep.Runtime.ORTVersion = ort.GetVersion()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Analyze(ctx, rep, Config{CacheDir: t.TempDir()}); err == nil {
		t.Error("a cancelled analysis returned no error")
	}
}

func TestParseRate(t *testing.T) {
	good := map[string]float64{"150G": 150e9, "1.5e11": 1.5e11, "150 GFLOP/s": 150e9, "20GB/s": 20e9, "2T": 2e12, "800M": 800e6, "42": 42, "3.5 GB/s": 3.5e9}
	for in, want := range good {
		if got, err := ParseRate(in); err != nil || !near(got, want) {
			t.Errorf("ParseRate(%q) = %g, %v; want %g", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fast", "G150", "150X", "-5G", "0", "150 GHz"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded", bad)
		}
	}
	if _, err := ParseGridIntensity("-1"); err == nil {
		t.Error("negative grid intensity accepted")
	}
}
