package analysis

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

func TestMeasurePeaksCancelled(t *testing.T) {
	testenv.RequireORT(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasurePeaks(ctx, Config{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPeaksCache(t *testing.T) {
	dir := t.TempDir()
	key := MachineKey("Intel(R) Xeon(R) Processor", 2, "1.24.3")
	if key != "intel-r-xeon-r-processor-2cpu-ort1.24.3" {
		t.Errorf("key = %q", key)
	}
	if _, err := LoadPeaks(dir, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty cache: err = %v, want not exist", err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := report.Peaks{FLOPsPerS: 1.5e11, BytesPerS: 1.2e10, MeasuredAt: &at, Method: "m"}
	if err := SavePeaks(dir, key, in); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPeaks(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.FLOPsPerS != in.FLOPsPerS || got.BytesPerS != in.BytesPerS || got.Ridge != 12.5 ||
		got.FLOPsSource != SourceCache || got.Machine != key || !got.MeasuredAt.Equal(at) || got.Method != "m" {
		t.Errorf("loaded %+v", got)
	}
	if err := SavePeaks(dir, key, report.Peaks{}); err == nil {
		t.Error("saving zero peaks succeeded")
	}
}

// TestFastestBounds: the microbenchmark stays short by its bounds, not by
// the machine's speed: it stops once its budget has passed (after at least
// peakMinRuns runs), never runs more than peakMaxRuns times, keeps the
// fastest run, and stops at cancellation or a failed run. The clock is
// scripted, so a loaded machine changes nothing.
func TestFastestBounds(t *testing.T) {
	const budget = 100 * time.Millisecond
	// clock advances by the next step each time it is read twice (once
	// before and once after a run): a run lasts steps[i].
	script := func(steps ...time.Duration) (func() error, func() time.Time, *int) {
		var now time.Time
		runs := 0
		run := func() error {
			d := steps[len(steps)-1]
			if runs < len(steps) {
				d = steps[runs]
			}
			now = now.Add(d)
			runs++
			return nil
		}
		return run, func() time.Time { return now }, &runs
	}
	tests := []struct {
		name     string
		steps    []time.Duration
		wantRuns int
		wantBest time.Duration
	}{
		{"budget spent by the slow first runs: the minimum still runs", []time.Duration{time.Second}, peakMinRuns, time.Second},
		{"budget spent after a 30ms run and seven of 10ms", []time.Duration{30 * time.Millisecond, 10 * time.Millisecond}, 8, 10 * time.Millisecond},
		{"runs that take no time stop at the maximum", []time.Duration{0}, peakMaxRuns, 0},
		{"fastest kept", []time.Duration{50 * time.Millisecond, 5 * time.Millisecond, 50 * time.Millisecond}, peakMinRuns, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, now, runs := script(tt.steps...)
			best, err := fastest(context.Background(), budget, run, now)
			if err != nil || *runs != tt.wantRuns || best != tt.wantBest {
				t.Errorf("fastest = %v, %v after %d runs; want %v after %d", best, err, *runs, tt.wantBest, tt.wantRuns)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	run, now, runs := script(0)
	counted := func() error {
		if *runs == 1 {
			cancel()
		}
		return run()
	}
	if _, err := fastest(ctx, budget, counted, now); !errors.Is(err, context.Canceled) || *runs != 2 {
		t.Errorf("cancelled: %v after %d runs, want context.Canceled after 2", err, *runs)
	}
	bad := errors.New("run failed")
	if _, err := fastest(context.Background(), budget, func() error { return bad }, now); !errors.Is(err, bad) {
		t.Errorf("failing run: %v, want %v", err, bad)
	}
}

// TestPeaksCacheLevels: the cache keeps each level's highest roof, its
// working set and thread count, and the one roof (BytesPerS) follows the
// DRAM roof on the default threads; a cache written before levels existed
// loads with none.
func TestPeaksCacheLevels(t *testing.T) {
	dir := t.TempDir()
	key := "fixture"
	first := *levelPeaks()
	if err := SavePeaks(dir, key, first); err != nil {
		t.Fatal(err)
	}
	second := *levelPeaks()
	second.Levels = append([]report.BandwidthRoof(nil), second.Levels...)
	for i := range second.Levels {
		second.Levels[i].BytesPerS /= 2
	}
	second.Levels[0].BytesPerS = 500e9 // L1 on one thread: higher this time
	second.Levels[7].BytesPerS = 45e9  // DRAM on the default threads: higher too
	finishLevels(&second)
	if err := SavePeaks(dir, key, second); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPeaks(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Levels) != 8 || got.Caches != "sysfs fixture" {
		t.Fatalf("levels %+v, caches %q", got.Levels, got.Caches)
	}
	for i, l := range got.Levels {
		want := max(first.Levels[i].BytesPerS, second.Levels[i].BytesPerS)
		if l.BytesPerS != want || l.Level != first.Levels[i].Level || l.Threads != first.Levels[i].Threads || l.WorkingSetBytes != first.Levels[i].WorkingSetBytes {
			t.Errorf("level %d = %+v, want %s on %d threads at %g B/s", i, l, first.Levels[i].Level, first.Levels[i].Threads, want)
		}
	}
	if got.BytesPerS != 45e9 {
		t.Errorf("one roof %g, want the DRAM roof on the default threads, 45e9", got.BytesPerS)
	}
	// An old cache file: one roof, no levels.
	if err := os.WriteFile(PeaksCachePath(dir, "old"), []byte(`{"flops_per_s":1e11,"bytes_per_s":2e10}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if old, err := LoadPeaks(dir, "old"); err != nil || len(old.Levels) != 0 || old.BytesPerS != 2e10 {
		t.Errorf("old cache: %+v, %v", old, err)
	}
	if err := os.WriteFile(PeaksCachePath(dir, "bad"), []byte(`{"flops_per_s":1e11,"bytes_per_s":2e10,"levels":[{"level":"L1","working_set_bytes":0,"bytes_per_s":1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPeaks(dir, "bad"); err == nil || !strings.Contains(err.Error(), "L1 roof") {
		t.Errorf("bad level: %v", err)
	}
}

// TestMeasurePeaksWithoutCacheSizes: on a machine whose sysfs does not
// describe its caches, whose CPUID says nothing and whose sweep shows no
// knee, the microbenchmark measures one DRAM-sized roof and the peaks say
// why there are no levels.
func TestMeasurePeaksWithoutCacheSizes(t *testing.T) {
	testenv.RequireORT(t)
	flat := func(context.Context) ([]int64, []float64, error) { return []int64{1, 2, 3}, []float64{1, 1, 1}, nil }
	p, err := MeasurePeaks(context.Background(), Config{HostRoot: "testdata/sysfs/nocache", sources: &cacheSources{cpuid: noCPUID, sweep: flat}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Levels) != 0 || p.BytesPerS <= 0 || p.Ridge != p.FLOPsPerS/p.BytesPerS ||
		!strings.Contains(p.Caches, "cache sizes unknown (no cache description in testdata/sysfs/nocache/sys/devices/system/cpu/cpu0/cache; CPUID gave no cache sizes; "+noKnee+"): one bandwidth roof") ||
		!strings.Contains(p.Method, "at working sets DRAM 64.0 MiB, on the default threads") {
		t.Errorf("peaks %+v", p)
	}
	r := Roofline(&report.Operators{Timeline: []report.NodeTiming{move("a", 1<<20, 1e6)}}, &p)
	if op := r.Ops[0]; op.Roof != LevelMemory || op.RoofBytesPerS != p.BytesPerS {
		t.Errorf("placed against %q at %g B/s, want the one roof", op.Roof, op.RoofBytesPerS)
	}
}
