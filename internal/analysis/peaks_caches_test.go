package analysis

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// The VM of issue 21: an AMD EPYC of family 26 without
// /sys/devices/system/cpu/cpu0/cache, whose CPUID (read by getconf) gives
// L1d 48 KiB and L2 1 MiB (and a 32 MiB L3).
func vmCPUID() ([]CacheLevel, string) {
	return []CacheLevel{{1, 48 << 10}, {2, 1 << 20}, {3, 32 << 20}}, "leaf 0x8000001D AuthenticAMD family 26"
}

func noCPUID() ([]CacheLevel, string) { return nil, "" }

func sweepOf(rates ...float64) func(context.Context) ([]int64, []float64, error) {
	return func(context.Context) ([]int64, []float64, error) {
		return sweepSets()[:len(rates)], rates, nil
	}
}

func TestKneesOf(t *testing.T) {
	sets := sweepSets() // 8 KiB, 16 KiB, ... 64 MiB
	tests := []struct {
		name  string
		rates []float64
		want  []CacheLevel
	}{
		{"two knees after a rise", []float64{30, 45, 50, 52, 20, 19, 18, 18, 17, 5, 5, 4, 4, 4}, []CacheLevel{{1, 128 << 10}, {2, 4 << 20}}},
		{"a gradual drop is one knee", []float64{50, 50, 50, 50, 30, 20, 18, 18, 18, 18, 18, 18, 18, 18}, []CacheLevel{{1, 128 << 10}}},
		{"one slow point is noise", []float64{50, 50, 50, 20, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50}, nil},
		{"flat", []float64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10}, nil},
		{"a drop at the last set", []float64{50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 50, 10}, []CacheLevel{{1, 64 << 20}}},
		{"too short", []float64{50, 10}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kneesOf(sets[:len(tt.rates)], tt.rates); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("kneesOf = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDiscoverCaches: sysfs first, then CPUID, then the sweep's knees, and
// the source is said.
func TestDiscoverCaches(t *testing.T) {
	noSweep := func(context.Context) ([]int64, []float64, error) { return nil, nil, errors.New("must not sweep") }
	tests := []struct {
		name   string
		root   string
		cpuid  func() ([]CacheLevel, string)
		sweep  func(context.Context) ([]int64, []float64, error)
		want   []CacheLevel
		source string
		err    string
	}{
		{"sysfs wins", "testdata/sysfs/epyc", vmCPUID, noSweep, nil, "sysfs testdata/sysfs/epyc/sys/devices/system/cpu/cpu0/cache", ""},
		{"CPUID without sysfs", "testdata/sysfs/nocache", vmCPUID, noSweep, []CacheLevel{{1, 48 << 10}, {2, 1 << 20}, {3, 32 << 20}},
			"CPUID (leaf 0x8000001D AuthenticAMD family 26): L1 48.0 KiB, L2 1.0 MiB, L3 32.0 MiB; no cache description in testdata/sysfs/nocache/sys/devices/system/cpu/cpu0/cache", ""},
		{"the sweep without CPUID", "testdata/sysfs/nocache", noCPUID, sweepOf(30, 45, 50, 52, 20, 19, 18, 18, 17, 5, 5, 4, 4, 4), []CacheLevel{{1, 128 << 10}, {2, 4 << 20}},
			"knees of a bandwidth sweep on 1 thread from 8.0 KiB to 64.0 MiB: L1 128.0 KiB, L2 4.0 MiB", ""},
		{"no knee", "testdata/sysfs/nocache", noCPUID, sweepOf(10, 10, 10, 10, 10, 10), nil, "CPUID gave no cache sizes; " + noKnee, ""},
		{"the sweep fails", "testdata/sysfs/nocache", noCPUID, noSweep, nil, "", "bandwidth sweep: must not sweep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := newConfig(Config{HostRoot: tt.root, sources: &cacheSources{cpuid: tt.cpuid, sweep: tt.sweep}})
			got, source, err := discoverCaches(context.Background(), cfg)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("levels %v, want %v", got, tt.want)
			}
			if !strings.Contains(source, tt.source) {
				t.Errorf("source %q, want it to contain %q", source, tt.source)
			}
		})
	}
}

// TestCPUIDAgreesWithSysfs: where this host has both, CPUID's L1d and L2
// are sysfs's.
func TestCPUIDAgreesWithSysfs(t *testing.T) {
	fromSysfs, err := ReadCacheLevels("/")
	if err != nil {
		t.Skipf("no sysfs cache description here: %v", err)
	}
	fromCPUID, leaf := cpuidCacheLevels()
	if len(fromCPUID) == 0 {
		t.Skip("CPUID gives no cache sizes here (not x86, or hidden by a hypervisor)")
	}
	for i := 0; i < 2 && i < len(fromSysfs) && i < len(fromCPUID); i++ {
		if fromSysfs[i] != fromCPUID[i] {
			t.Errorf("CPUID (%s) %v, sysfs %v", leaf, fromCPUID, fromSysfs)
		}
	}
}

// detEPYC is a real `ortel bench paddleocr-det` report from the project's
// 2-core AMD EPYC build machine (ORT 1.30.0, 10 profiled runs, 400 nodes),
// its peaks measured there per cache level.
func detEPYC(t *testing.T) *report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal(testenv.Gunzip(t, "testdata/det_report_epyc.json.gz"), &r); err != nil {
		t.Fatal(err)
	}
	if r.Operators == nil || len(r.Operators.Timeline) == 0 || r.Analysis == nil || r.Analysis.Peaks == nil || len(r.Analysis.Peaks.Levels) == 0 {
		t.Fatal("the det fixture lacks its timeline or per-level peaks")
	}
	return &r
}

// aboveByKind counts the nodes above their roofs by reason and fails on
// one without a reason.
func aboveByKind(t *testing.T, rf *report.Roofline) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, op := range rf.Ops {
		if op.RoofShare == nil || *op.RoofShare <= 1 {
			continue
		}
		if op.AboveRoof == "" || op.AboveReason == "" {
			t.Errorf("%s is at %.0f%% of its roof without a reason", op.Name, *op.RoofShare*100)
		}
		out[op.AboveReason]++
	}
	return out
}

// TestRooflineDetWithoutSysfs is issue 21's VM: no sysfs cache files.
// Before, the peaks had one DRAM-sized roof and most of det's nodes were
// "above the one bandwidth roof", each with the same sentence; with the
// cache sizes from CPUID, each node is compared with its level's roof and
// none is above its roof for want of a measured one.
func TestRooflineDetWithoutSysfs(t *testing.T) {
	r := detEPYC(t)
	measured := *r.Analysis.Peaks

	// Before: what MeasurePeaks gave without cache sizes.
	one := measured
	one.Levels = nil
	one.Caches = "cache sizes unknown (no cache description in /sys/devices/system/cpu/cpu0/cache): one bandwidth roof, measured at a DRAM-sized working set"
	before := aboveByKind(t, RooflineThreads(r.Operators, &one, 0))
	if before[aboveLabels[aboveOneRoof]] == 0 {
		t.Fatalf("with one roof no node is above it for want of a cache roof (%v): the fixture no longer shows the VM's problem", before)
	}

	// After: the sizes from the VM's CPUID, the roofs measured per level.
	cfg := newConfig(Config{HostRoot: "testdata/sysfs/nocache", sources: &cacheSources{cpuid: vmCPUID, sweep: nil}})
	caches, source, err := discoverCaches(context.Background(), cfg)
	if err != nil || !strings.HasPrefix(source, "CPUID") || len(caches) != 3 {
		t.Fatalf("caches %v from %q, %v; want the VM's three from CPUID", caches, source, err)
	}
	levels := measured
	levels.Caches = source
	after := aboveByKind(t, RooflineThreads(r.Operators, &levels, 0))
	if n := after[aboveLabels[aboveOneRoof]]; n != 0 {
		t.Errorf("%d nodes above the one roof with per-level roofs", n)
	}
	t.Logf("det, 400 nodes, above their roofs by reason: one roof %v; per-level roofs (%s) %v", before, source, after)
}

// TestMeasurePeaksWithoutSysfs: on a host root without sysfs cache files,
// MeasurePeaks takes the cache sizes from CPUID (here the VM's) and
// measures a roof per level, saying where the sizes came from.
func TestMeasurePeaksWithoutSysfs(t *testing.T) {
	testenv.RequireORT(t)
	p, err := MeasurePeaks(context.Background(), Config{HostRoot: "testdata/sysfs/nocache", sources: &cacheSources{cpuid: vmCPUID, sweep: nil}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range p.Levels {
		if len(names) == 0 || names[len(names)-1] != l.Level {
			names = append(names, l.Level)
		}
	}
	if strings.Join(names, " ") != "L1 L2 L3 DRAM" || !strings.HasPrefix(p.Caches, "CPUID (leaf 0x8000001D AuthenticAMD family 26): L1 48.0 KiB, L2 1.0 MiB, L3 32.0 MiB") {
		t.Errorf("levels %v from %q, want L1 L2 L3 DRAM from CPUID", names, p.Caches)
	}
	r := Roofline(&report.Operators{Timeline: []report.NodeTiming{move("a", 1<<20, 1e6)}}, &p)
	if op := r.Ops[0]; op.Roof != "L2" {
		t.Errorf("a 1 MiB node placed against %q, want L2 (1 MiB)", op.Roof)
	}
}

// TestMeasurePeaksSweep: with neither sysfs nor CPUID cache sizes, the
// real bandwidth sweep runs and the peaks say what it found (the knees a
// busy machine shows vary, so only their form is checked).
func TestMeasurePeaksSweep(t *testing.T) {
	testenv.RequireORT(t)
	p, err := MeasurePeaks(context.Background(), Config{HostRoot: "testdata/sysfs/nocache", sources: &cacheSources{cpuid: noCPUID, sweep: sweepBandwidth}})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case len(p.Levels) > 0:
		if !strings.HasPrefix(p.Caches, "knees of a bandwidth sweep on 1 thread from 8.0 KiB to 64.0 MiB: L1 ") {
			t.Errorf("levels without the sweep named: %q", p.Caches)
		}
	case !strings.HasSuffix(p.Caches, noKnee+"): one bandwidth roof, measured at a DRAM-sized working set"):
		t.Errorf("one roof without saying the sweep found no knee: %q", p.Caches)
	}
	t.Logf("sweep: %s", p.Caches)
}
