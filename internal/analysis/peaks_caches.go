package analysis

import (
	"context"
	"fmt"
	"strings"

	"github.com/klauspost/cpuid/v2"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/units"
)

// Where the cache sizes of the bandwidth roofs come from, in order: sysfs
// (the kernel's description of CPU 0's caches), else the CPU itself
// (CPUID), else the knees of a bandwidth sweep, as the Empirical Roofline
// Toolkit finds them. Some virtual machines have no
// /sys/devices/system/cpu/cpu0/cache at all while CPUID still describes
// the caches (glibc's getconf reads it there), and CPUID is x86 only: the
// sweep needs nothing but ONNX Runtime.
//
// CPUID is read through github.com/klauspost/cpuid/v2, which walks leaf 4
// on Intel and leaf 0x8000001D on AMD (0x80000005/6 where AMD lacks it),
// works around hypervisors that answer every subleaf alike, and is
// maintained for many CPU generations; hand-written assembly would repeat
// all of that.

// noKnee ends Peaks.Caches when no source gave cache sizes, the sweep
// included; cached peaks without it (older ones) are measured again.
const noKnee = "the bandwidth sweep found no knee"

// cpuidCacheLevels returns the data caches CPUID describes (L1d, L2, L3;
// sizes of one instance) and the leaf it read, or nil when CPUID gives
// none (not x86, or a hypervisor that hides them).
func cpuidCacheLevels() ([]CacheLevel, string) {
	c := cpuid.CPU
	var out []CacheLevel
	for i, b := range []int{c.Cache.L1D, c.Cache.L2, c.Cache.L3} {
		if b > 0 {
			out = append(out, CacheLevel{Level: i + 1, Bytes: int64(b)})
		}
	}
	leaf := "leaf 4"
	switch c.VendorID {
	case cpuid.AMD, cpuid.Hygon:
		leaf = "leaf 0x8000001D"
		if !c.Has(cpuid.TOPEXT) {
			leaf = "leaves 0x80000005 and 0x80000006"
		}
	}
	return out, fmt.Sprintf("%s %s family %d", leaf, c.VendorString, c.Family)
}

// levelsText lists cache levels: "L1 48.0 KiB, L2 1.0 MiB".
func levelsText(levels []CacheLevel) string {
	parts := make([]string, len(levels))
	for i, l := range levels {
		parts[i] = l.Name() + " " + units.Bytes(l.Bytes)
	}
	return strings.Join(parts, ", ")
}

// discoverCaches finds the cache levels the bandwidth roofs are measured
// for (sysfs, CPUID, the sweep) and says where they came from. It returns
// nil levels, with the reasons, when no source gave any.
func discoverCaches(ctx context.Context, cfg *config) ([]CacheLevel, string, error) {
	levels, err := ReadCacheLevels(cfg.HostRoot)
	if err == nil {
		return levels, "sysfs " + cacheDir(cfg.HostRoot), nil
	}
	why := err.Error()
	if levels, leaf := cfg.cpuid(); len(levels) > 0 {
		return levels, fmt.Sprintf("CPUID (%s): %s; %s", leaf, levelsText(levels), why), nil
	}
	why += "; CPUID gave no cache sizes"
	if cfg.sweep == nil {
		return nil, why, nil
	}
	sets, rates, err := cfg.sweep(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("bandwidth sweep: %w", err)
	}
	levels = kneesOf(sets, rates)
	if len(levels) == 0 {
		return nil, why + "; " + noKnee, nil
	}
	return levels, fmt.Sprintf("knees of a bandwidth sweep on 1 thread from %s to %s: %s (each the first working set past a drop to under %.0f%% of the rate before it); %s",
		units.Bytes(sets[0]), units.Bytes(sets[len(sets)-1]), levelsText(levels), kneeDrop*100, why), nil
}

// The knee sweep: working sets from sweepFirst to sweepLast, doubling,
// each run on one thread for sweepBudget.
const (
	sweepFirst = 8 << 10
	sweepLast  = 64 << 20
	// A knee is a working set whose rate, and the next one's, fall under
	// kneeDrop times the fastest rate of the plateau before it.
	kneeDrop = 0.7
	// At most kneeMax caches are found.
	kneeMax = 3
)

// sweepSets are the working sets of the knee sweep.
func sweepSets() []int64 {
	var out []int64
	for s := int64(sweepFirst); s <= sweepLast; s *= 2 {
		out = append(out, s)
	}
	return out
}

// sweepBandwidth measures the bandwidth of the element-wise chain at each
// working set of sweepSets on one thread.
func sweepBandwidth(ctx context.Context) ([]int64, []float64, error) {
	sets := sweepSets()
	rates := make([]float64, len(sets))
	for i, ws := range sets {
		s := newStep("sweep", 0, ws, 1, levelBudget/2)
		n := s.floats
		best, err := fastestRun(ctx, s.budget, s.threads, onnxgen.ElementwiseChain(s.pairs, n), []string{"x"}, [][]int64{{n}}, "y", []int64{n})
		if err != nil {
			return nil, nil, fmt.Errorf("%s working set: %w", units.Bytes(ws), err)
		}
		if best <= 0 {
			return nil, nil, fmt.Errorf("%s working set: a run took no measurable time", units.Bytes(ws))
		}
		rates[i] = float64(s.bytesPerRun()) / best.Seconds()
	}
	return sets, rates, nil
}

// kneesOf finds cache levels in a bandwidth sweep (rates at increasing
// working sets): a knee is a working set whose rate, and the next one's
// (when there is one), fall under kneeDrop times the fastest rate since
// the previous knee; the cache before it holds less than that working set,
// which becomes the level's size. A rate that drops once and recovers is
// noise, not a knee. The rates may rise at first (ONNX Runtime's per-node
// cost weighs more on small working sets). The last plateau is DRAM; at
// most kneeMax levels are returned.
func kneesOf(sets []int64, rates []float64) []CacheLevel {
	var out []CacheLevel
	if len(sets) != len(rates) || len(sets) < 3 {
		return nil
	}
	peak := rates[0]
	for i := 1; i < len(sets) && len(out) < kneeMax; i++ {
		r := rates[i]
		confirmed := i+1 == len(sets) || rates[i+1] < kneeDrop*peak
		if r < kneeDrop*peak && confirmed {
			out = append(out, CacheLevel{Level: len(out) + 1, Bytes: sets[i]})
			// The next plateau starts after the transition point.
			if i+1 < len(sets) {
				i++
				peak = rates[i]
			}
			continue
		}
		peak = max(peak, r)
	}
	return out
}
