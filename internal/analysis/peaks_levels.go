package analysis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
)

// Level names of report.BandwidthRoof.
const (
	LevelDRAM = "DRAM"
	// LevelMemory names the one bandwidth roof used when the cache sizes
	// are unknown or the bandwidth came from --peak-bw.
	LevelMemory = "memory"
)

// CacheLevel is one data (or unified) cache of CPU 0, as sysfs describes
// it.
type CacheLevel struct {
	// Level is 1, 2, 3...
	Level int
	// Bytes is the size of one instance of the cache.
	Bytes int64
}

// Name is "L1", "L2"...
func (c CacheLevel) Name() string { return "L" + strconv.Itoa(c.Level) }

// cacheDir is where sysfs describes CPU 0's caches, under a host root.
func cacheDir(root string) string {
	return filepath.Join(root, "sys", "devices", "system", "cpu", "cpu0", "cache")
}

// ReadCacheLevels reads the data and unified caches of CPU 0 from sysfs
// under root ("/" on a host; a fixture tree in tests):
// sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}. Instruction
// caches are left out; of two caches of one level the larger is kept. The
// result is sorted by level. An unreadable or malformed entry is an error
// naming its file: the caller then falls back to one bandwidth roof.
func ReadCacheLevels(root string) ([]CacheLevel, error) {
	dir := cacheDir(root)
	entries, err := filepath.Glob(filepath.Join(dir, "index*"))
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("no cache description in %s", dir)
	}
	byLevel := map[int]int64{}
	for _, e := range entries {
		read := func(name string) (string, error) {
			b, err := os.ReadFile(filepath.Join(e, name))
			return strings.TrimSpace(string(b)), err
		}
		typ, err := read("type")
		if err != nil {
			return nil, err
		}
		if typ == "Instruction" {
			continue
		}
		ls, err := read("level")
		if err != nil {
			return nil, err
		}
		level, err := strconv.Atoi(ls)
		if err != nil || level < 1 || level > 9 {
			return nil, fmt.Errorf("%s: %q is not a cache level", filepath.Join(e, "level"), ls)
		}
		ss, err := read("size")
		if err != nil {
			return nil, err
		}
		size, err := ParseCacheSize(ss)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(e, "size"), err)
		}
		byLevel[level] = max(byLevel[level], size)
	}
	if len(byLevel) == 0 {
		return nil, fmt.Errorf("no data cache in %s", dir)
	}
	var out []CacheLevel
	for l, b := range byLevel {
		out = append(out, CacheLevel{Level: l, Bytes: b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Level < out[j].Level })
	return out, nil
}

// ParseCacheSize parses a sysfs cache size: a number of bytes with an
// optional K, M or G suffix (binary: "32K" is 32768 bytes).
func ParseCacheSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'K', 'k':
			mult = 1 << 10
		case 'M', 'm':
			mult = 1 << 20
		case 'G', 'g':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v <= 0 || v > (1<<40)/mult {
		return 0, fmt.Errorf("%q is not a cache size (want a positive number of bytes with an optional K, M or G, like 32K)", s)
	}
	return v * mult, nil
}

// bandwidthStep is one measurement of the bandwidth microbenchmark: an
// ElementwiseChain of pairs Add+Mul pairs over floats floats, run with
// threads intra-op threads (0: ONNX Runtime's default).
type bandwidthStep struct {
	level      string
	cacheBytes int64
	floats     int64
	pairs      int
	threads    int
	budget     time.Duration
}

// workingSet is what a step keeps live: its input and two intermediate
// tensors (ONNX Runtime may reuse one of them in place), 12 bytes a float.
func (s bandwidthStep) workingSet() int64 { return 12 * s.floats }

// bytesPerRun is what one run reads and writes: every node of the chain
// reads one float tensor and writes one (its other input is a scalar).
func (s bandwidthStep) bytesPerRun() int64 { return int64(2*s.pairs) * 8 * s.floats }

// The bandwidth microbenchmark's sizes.
const (
	// A cache level is measured at half its size, so the working set fits
	// next to whatever else the process keeps there, and, when that is
	// more than twice the level below, also at twice the level below: a
	// roof is the fastest rate of any working set the level holds, and a
	// small one keeps more of a shared cache.
	levelFill = 2
	// DRAM is measured at dramFactor times the last cache (at least
	// dramMinBytes) and at twice the last cache.
	dramFactor   = 4
	dramMinBytes = 64 << 20
	// Each run moves at least runBytes (more nodes for small working
	// sets, so ONNX Runtime's per-run cost is spread over many nodes), with
	// 1 to maxPairs Add+Mul pairs.
	runBytes = 4 << 20
	maxPairs = 32
	// Each cache step runs for levelBudget, each DRAM step for dramBudget.
	levelBudget = 100 * time.Millisecond
	dramBudget  = 200 * time.Millisecond
)

// bandwidthPlan returns the steps that measure the bandwidth roofs of the
// given caches, once per thread count: for each cache level a step at half
// its size and, when that is more than four times the level below, one at
// twice the level below; for DRAM a step beyond the last level and one at
// twice it. Without caches it returns one DRAM step, sized dramMinBytes.
func bandwidthPlan(caches []CacheLevel, threads []int) []bandwidthStep {
	var steps []bandwidthStep
	for _, th := range threads {
		below := int64(0)
		for _, c := range caches {
			if below > 0 && 2*below < c.Bytes/levelFill {
				steps = append(steps, newStep(c.Name(), c.Bytes, 2*below, th, levelBudget))
			}
			steps = append(steps, newStep(c.Name(), c.Bytes, c.Bytes/levelFill, th, levelBudget))
			below = max(below, c.Bytes)
		}
		if below > 0 && 2*below < max(dramFactor*below, dramMinBytes) {
			steps = append(steps, newStep(LevelDRAM, 0, 2*below, th, dramBudget))
		}
		steps = append(steps, newStep(LevelDRAM, 0, max(dramFactor*below, dramMinBytes), th, dramBudget))
	}
	return steps
}

func newStep(level string, cacheBytes, workingSet int64, threads int, budget time.Duration) bandwidthStep {
	s := bandwidthStep{level: level, cacheBytes: cacheBytes, floats: max(workingSet/12, 16), threads: threads, budget: budget}
	perPair := 16 * s.floats
	s.pairs = int(min(max((runBytes+perPair-1)/perPair, 1), maxPairs))
	return s
}

// planDuration is how long the bandwidth steps of a plan run at least
// (their budgets; each also pays one session creation and one untimed run).
func planDuration(steps []bandwidthStep) time.Duration {
	var d time.Duration
	for _, s := range steps {
		d += s.budget
	}
	return d
}

// measureBandwidth runs the steps through ONNX Runtime and returns one
// roof per level and thread count: the fastest of its working sets.
func measureBandwidth(ctx context.Context, steps []bandwidthStep) ([]report.BandwidthRoof, error) {
	rates := make([]float64, len(steps))
	for i, s := range steps {
		n := s.floats
		best, err := fastestRun(ctx, s.budget, s.threads, onnxgen.ElementwiseChain(s.pairs, n), []string{"x"}, [][]int64{{n}}, "y", []int64{n})
		if err != nil {
			return nil, fmt.Errorf("%s bandwidth (%d-byte working set): %w", s.level, s.workingSet(), err)
		}
		if best <= 0 {
			return nil, fmt.Errorf("%s bandwidth (%d-byte working set): a run took no measurable time", s.level, s.workingSet())
		}
		rates[i] = float64(s.bytesPerRun()) / best.Seconds()
	}
	return roofsOf(steps, rates), nil
}

// roofsOf folds the rates of steps into one roof per level and thread
// count, in plan order: the fastest rate, the working set that reached it
// and every working set measured.
func roofsOf(steps []bandwidthStep, rates []float64) []report.BandwidthRoof {
	var out []report.BandwidthRoof
	index := map[[2]string]int{}
	for i, s := range steps {
		key := [2]string{s.level, strconv.Itoa(s.threads)}
		k, ok := index[key]
		if !ok {
			k = len(out)
			index[key] = k
			out = append(out, report.BandwidthRoof{Level: s.level, CacheBytes: s.cacheBytes, Threads: s.threads})
		}
		r := &out[k]
		r.WorkingSets = append(r.WorkingSets, s.workingSet())
		if rates[i] > r.BytesPerS {
			r.BytesPerS, r.WorkingSetBytes = rates[i], s.workingSet()
		}
	}
	for i := range out {
		sort.Slice(out[i].WorkingSets, func(a, b int) bool { return out[i].WorkingSets[a] < out[i].WorkingSets[b] })
	}
	return out
}
