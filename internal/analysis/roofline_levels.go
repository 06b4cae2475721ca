package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// profilerResolution is the resolution of ONNX Runtime's profiler
// timestamps: whole microseconds.
const profilerResolution = 1e-6

// Kinds of reasons a node sits above its roof.
const (
	aboveTimer      = "timer"
	aboveThreads    = "threads"
	aboveCloser     = "closer cache"
	aboveSmallRoof  = "per-node cost"
	aboveSmallerSet = "smaller working set"
	aboveAll        = "above every roof"
	aboveOneRoof    = "one roof"
	aboveCompute    = "compute roof"
)

// aboveReason says why a node is above its roof: a kind (to count) and
// the sentence the report shows.
type aboveReason struct{ kind, text string }

// roofSet chooses the bandwidth roof of each node from a machine's peaks.
type roofSet struct {
	peaks *report.Peaks
	// levels is true when peaks has per-level roofs.
	levels bool
	// want is the thread count of the roofs nodes are compared with: 1
	// for a model run on one thread, else 0 (ONNX Runtime's default).
	want int
	// caches are the cache levels by size, smallest first.
	caches []report.BandwidthRoof
}

func newRoofSet(peaks *report.Peaks, threads int) roofSet {
	s := roofSet{peaks: peaks}
	if threads == 1 {
		s.want = 1
	}
	if peaks == nil {
		return s
	}
	seen := map[string]bool{}
	for _, l := range peaks.Levels {
		if l.Level == LevelDRAM {
			s.levels = true
			continue
		}
		if !seen[l.Level] && l.CacheBytes > 0 {
			seen[l.Level] = true
			s.caches = append(s.caches, l)
		}
	}
	sort.SliceStable(s.caches, func(i, j int) bool { return s.caches[i].CacheBytes < s.caches[j].CacheBytes })
	return s
}

// flops is the compute roof, 0 without peaks.
func (s roofSet) flops() float64 {
	if s.peaks == nil {
		return 0
	}
	return s.peaks.FLOPsPerS
}

// roofFor returns the bandwidth roof a node moving bytes is compared with:
// the roof of the smallest cache level its bytes fit in (DRAM when none
// holds them) on the model's thread count, or the one roof of the peaks
// when they have no levels. It returns false without usable peaks.
func (s roofSet) roofFor(bytes float64) (report.BandwidthRoof, bool) {
	if s.peaks == nil || s.peaks.FLOPsPerS <= 0 || s.peaks.BytesPerS <= 0 {
		return report.BandwidthRoof{}, false
	}
	if s.levels {
		level := LevelDRAM
		for _, c := range s.caches {
			if float64(c.CacheBytes) >= bytes {
				level = c.Level
				break
			}
		}
		if r, ok := s.measured(level, s.want); ok {
			return r, true
		}
	}
	return report.BandwidthRoof{Level: LevelMemory, BytesPerS: s.peaks.BytesPerS}, true
}

// measured returns level's roof on threads, or its highest roof on another
// thread count when that one was not measured.
func (s roofSet) measured(level string, threads int) (report.BandwidthRoof, bool) {
	var best report.BandwidthRoof
	found := false
	for _, l := range s.peaks.Levels {
		if l.Level != level || l.BytesPerS <= 0 {
			continue
		}
		if l.Threads == threads {
			return l, true
		}
		if !found || l.BytesPerS > best.BytesPerS {
			best, found = l, true
		}
	}
	return best, found
}

// closer returns the roofs of the cache levels smaller than level, the
// nearest level first and, within a level, the roof on threads first.
func (s roofSet) closer(level string, threads int) []report.BandwidthRoof {
	var out []report.BandwidthRoof
	for i := len(s.caches) - 1; i >= 0; i-- {
		c := s.caches[i]
		if levelRank(c.Level) >= levelRank(level) {
			continue
		}
		var same, other []report.BandwidthRoof
		for _, l := range s.peaks.Levels {
			switch {
			case l.Level != c.Level:
			case l.Threads == threads:
				same = append(same, l)
			default:
				other = append(other, l)
			}
		}
		out = append(append(out, same...), other...)
	}
	return out
}

// explain says why a node that took dur is above its roof (its RoofShare
// is above 1). It always returns a reason: when no measured roof accounts
// for the node, it says that and what to suspect.
func (s roofSet) explain(p report.RooflinePoint, dur float64, roof report.BandwidthRoof) aboveReason {
	if p.Bound == BoundCompute {
		if p.FLOPs != nil && *p.FLOPs/(dur+profilerResolution) <= s.peaks.FLOPsPerS {
			return aboveReason{aboveTimer, fmt.Sprintf("a %s node: the profiler records whole microseconds, and 1 µs longer it would be under the compute roof", units.Duration(dur))}
		}
		src := "measured"
		if s.peaks.FLOPsSource == SourceFlag {
			src = "given by --peak-flops"
		}
		return aboveReason{aboveCompute, fmt.Sprintf("above the compute roof (%s, %s): the peak is lower than what this node reached", units.Rate(s.peaks.FLOPsPerS, "FLOP/s"), src)}
	}
	rate := p.BytesPerS
	if p.Bytes/(dur+profilerResolution) <= roof.BytesPerS {
		return aboveReason{aboveTimer, fmt.Sprintf("a %s node: the profiler records whole microseconds, and 1 µs longer it would be at %s of its %s roof",
			units.Duration(dur), units.Percent(p.Bytes/(dur+profilerResolution)/roof.BytesPerS, 1), roof.Level)}
	}
	if !s.levels || roof.Level == LevelMemory {
		why := "the bandwidth was given by --peak-bw"
		if s.peaks.BytesSource != SourceFlag {
			why = orText(s.peaks.Caches, "these peaks were measured before ortel measured a roof per cache level; --remeasure-peaks measures them")
		}
		return aboveReason{aboveOneRoof, fmt.Sprintf("above the one bandwidth roof (%s): its %s likely came from a cache, whose roof is not measured (%s)",
			units.Rate(s.peaks.BytesPerS, "B/s"), units.Bytes(int64(p.Bytes)), why)}
	}
	if s.want != 1 {
		// A model on several threads runs small tensors on one: the
		// one-thread roof of the level may be the one that applies. (A
		// model on one thread has no other thread count to run on.)
		for _, l := range s.peaks.Levels {
			if l.Level == roof.Level && l.Threads == 1 && roof.Threads != 1 && l.BytesPerS >= rate {
				return aboveReason{aboveThreads, fmt.Sprintf("above the %s roof on %s (%s) but within the %s roof on 1 thread (%s): ONNX Runtime splits only large tensors across threads, and ran this node on one",
					roof.Level, threadsText(roof.Threads), units.Rate(roof.BytesPerS, "B/s"), l.Level, units.Rate(l.BytesPerS, "B/s"))}
			}
		}
	}
	if smallest := smallestSet(roof); p.Bytes < float64(smallest) {
		where := "the " + roof.Level + " it shares with other cores and processes"
		if roof.Level == LevelDRAM {
			where = "the last cache"
		}
		return aboveReason{aboveSmallerSet, fmt.Sprintf("its %s is under the smallest working set the %s roof was measured at (%s; the roof, %s on %s), and a smaller working set keeps more of itself in %s",
			units.Bytes(int64(p.Bytes)), roof.Level, units.Bytes(smallest), units.Rate(roof.BytesPerS, "B/s"), threadsText(roof.Threads), where)}
	}
	for _, l := range s.closer(roof.Level, roof.Threads) {
		if l.BytesPerS >= rate {
			return aboveReason{aboveCloser, fmt.Sprintf("its %s fit %s, but at %s it is within the %s roof on %s (%s): part of its bytes came from a closer cache (inputs the node before it left in %s, or each thread's share fitting a private %s)",
				units.Bytes(int64(p.Bytes)), roof.Level, units.Rate(rate, "B/s"), l.Level, threadsText(l.Threads), units.Rate(l.BytesPerS, "B/s"), l.Level, l.Level)}
		}
	}
	fastest := roof
	for _, l := range s.peaks.Levels {
		if l.BytesPerS > fastest.BytesPerS {
			fastest = l
		}
	}
	if fastest.BytesPerS >= rate {
		return aboveReason{aboveSmallRoof, fmt.Sprintf("its %s fit %s, but at %s it is within the %s roof on %s (%s): the %s roof, measured at a %s working set, is held down by ONNX Runtime's fixed cost per node, which this node spreads over more bytes",
			units.Bytes(int64(p.Bytes)), roof.Level, units.Rate(rate, "B/s"), fastest.Level, threadsText(fastest.Threads), units.Rate(fastest.BytesPerS, "B/s"), roof.Level, units.Bytes(roof.WorkingSetBytes))}
	}
	return aboveReason{aboveAll, fmt.Sprintf("above every measured roof (the fastest, %s on %s, is %s): the microbenchmark was likely slowed by other processes, or the profiler's byte count (activation + parameter + output) overstates this node's traffic; rerun with --remeasure-peaks on an idle machine",
		fastest.Level, threadsText(fastest.Threads), units.Rate(fastest.BytesPerS, "B/s"))}
}

// smallestSet is the smallest working set a roof was measured at.
func smallestSet(r report.BandwidthRoof) int64 {
	if len(r.WorkingSets) > 0 {
		return r.WorkingSets[0]
	}
	return r.WorkingSetBytes
}

// aboveLabels are the short forms of the reasons, for op-type summaries.
var aboveLabels = map[string]string{
	aboveTimer:      "within the profiler's 1 µs resolution",
	aboveThreads:    "within the roof of another thread count",
	aboveCloser:     "served partly from a closer cache",
	aboveSmallerSet: "smaller than the working set their roof was measured at",
	aboveSmallRoof:  "within a larger level's roof (their own level's roof is held down by ONNX Runtime's per-node cost)",
	aboveAll:        "above every measured roof",
	aboveOneRoof:    "above the one bandwidth roof (caches not measured)",
	aboveCompute:    "above the compute roof",
}

// summarizeAbove says how many of an op type's nodes are above their roofs
// and why, counted by reason.
func summarizeAbove(reasons []aboveReason, nodes int) string {
	count := map[string]int{}
	var kinds []string
	for _, r := range reasons {
		if count[r.kind] == 0 {
			kinds = append(kinds, r.kind)
		}
		count[r.kind]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", count[k], aboveLabels[k])
	}
	return fmt.Sprintf("%d of %d nodes above their roofs: %s (each node says why)", len(reasons), nodes, strings.Join(parts, ", "))
}

// typePlacement names the roofs an op type's nodes are compared with, by
// level size; with a single roof it gives its bandwidth and thread count.
func typePlacement(roofs []report.BandwidthRoof) report.RoofPlacement {
	if len(roofs) == 0 {
		return report.RoofPlacement{}
	}
	seen := map[string]bool{}
	var names []string
	same := true
	for _, r := range roofs {
		if !seen[r.Level] {
			seen[r.Level] = true
			names = append(names, r.Level)
		}
		same = same && r.Level == roofs[0].Level && r.Threads == roofs[0].Threads && r.BytesPerS == roofs[0].BytesPerS
	}
	sort.SliceStable(names, func(i, j int) bool { return levelRank(names[i]) < levelRank(names[j]) })
	p := report.RoofPlacement{Roof: strings.Join(names, ", ")}
	if same {
		p.RoofBytesPerS = roofs[0].BytesPerS
		if roofs[0].Level != LevelMemory {
			p.RoofThreads = intPtr(roofs[0].Threads)
		}
	}
	return p
}

// levelRank orders level names: L1, L2, ..., DRAM, memory.
func levelRank(name string) int {
	if n, err := strconv.Atoi(strings.TrimPrefix(name, "L")); err == nil && strings.HasPrefix(name, "L") {
		return n
	}
	if name == LevelDRAM {
		return 100
	}
	return 101
}

// majorityBound is the bound holding most of the time.
func majorityBound(t map[string]float64) string {
	best, bound := -1.0, BoundUnknown
	for _, b := range []string{BoundCompute, BoundMemory, BoundOverhead, BoundUnknown} {
		if v, ok := t[b]; ok && v > best {
			best, bound = v, b
		}
	}
	return bound
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
