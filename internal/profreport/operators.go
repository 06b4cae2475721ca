package profreport

import (
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/profile"
	"github.com/ortel-dev/ortel/internal/report"
)

// Collector aggregates the profiled operators of a bench's profiling pass
// or of a profile file into the report's operator section: self time and
// calls per op type, the last run's timeline, the memory arena. It is safe
// for concurrent use.
type Collector struct {
	mu       sync.Mutex
	byKey    map[[2]string]*report.OpType
	runs     map[int64]int            // nodes per run
	provider map[int64]map[string]int // run -> provider -> nodes
	lastRun  int64
	timeline []report.NodeTiming
	runStart map[int64]time.Time
	runSpan  map[int64]trace.SpanContext
	// arenaPeak is the most the memory arena held (ORT 1.25+ profiles).
	arenaPeak int64
	arenaGrow map[[2]string]int64 // (node, op type) -> bytes it grew the arena by
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{
		byKey:    map[[2]string]*report.OpType{},
		runs:     map[int64]int{},
		provider: map[int64]map[string]int{},
		runStart: map[int64]time.Time{},
		runSpan:  map[int64]trace.SpanContext{},
		lastRun:  -1,
	}
}

// Observe takes one profiled operator.
func (c *Collector) Observe(n instrument.ProfiledNode) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := &n.Node
	key := [2]string{ev.OpName, ev.Provider}
	t := c.byKey[key]
	if t == nil {
		t = &report.OpType{OpType: ev.OpName, Provider: ev.Provider}
		c.byKey[key] = t
	}
	t.Calls++
	t.TotalS += n.Self.Seconds() // self time: a node running a subgraph does not count it again
	c.runs[n.Run]++
	if ev.Memory.Present {
		c.arenaPeak = max(c.arenaPeak, ev.Memory.ArenaHeld)
		if d := ev.Memory.ArenaHeldDelta; d > 0 {
			if c.arenaGrow == nil {
				c.arenaGrow = map[[2]string]int64{}
			}
			c.arenaGrow[[2]string{ev.NodeName(), ev.OpName}] += d
		}
	}
	if n.RunSpan.IsValid() {
		c.runSpan[n.Run] = n.RunSpan
	}
	if c.provider[n.Run] == nil {
		c.provider[n.Run] = map[string]int{}
	}
	c.provider[n.Run][ev.Provider]++
	if n.Run > c.lastRun {
		c.lastRun = n.Run
		c.timeline = c.timeline[:0]
	}
	if n.Run == c.lastRun {
		if s, ok := c.runStart[n.Run]; !ok || n.Start.Before(s) {
			c.runStart[n.Run] = n.Start
		}
		ts := ev.ThreadSummary()
		c.timeline = append(c.timeline, report.NodeTiming{
			Name: ev.NodeName(), OpType: ev.OpName, Provider: ev.Provider,
			StartS: float64(n.Start.UnixNano()) / 1e9, DurS: float64(ev.Dur) / 1e6,
			InputShapes: shapes(ev.InputShapes), OutputShapes: shapes(ev.OutputShapes),
			ActivationSize: ev.ActivationSize, ParameterSize: ev.ParameterSize, OutputSize: ev.OutputSize,
			Threads: ts.Threads, Imbalance: ts.Imbalance,
			SubgraphS: max(time.Duration(ev.Dur)*time.Microsecond-n.Self, 0).Seconds(), Depth: n.Depth,
			ArenaHeldDelta: ev.Memory.ArenaHeldDelta, ArenaHeld: ev.Memory.ArenaHeld,
		})
	}
}

// Summary returns the operator section of what was observed.
func (c *Collector) Summary() *report.Operators {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops := &report.Operators{ProfiledRuns: len(c.runs), NodesByProvider: map[string]int{}, ArenaPeakBytes: c.arenaPeak}
	for k, b := range c.arenaGrow {
		ops.ArenaGrowth = append(ops.ArenaGrowth, report.ArenaGrowth{Name: k[0], OpType: k[1], Bytes: b})
	}
	sort.Slice(ops.ArenaGrowth, func(i, j int) bool {
		if ops.ArenaGrowth[i].Bytes != ops.ArenaGrowth[j].Bytes {
			return ops.ArenaGrowth[i].Bytes > ops.ArenaGrowth[j].Bytes
		}
		return ops.ArenaGrowth[i].Name < ops.ArenaGrowth[j].Name
	})
	ops.ArenaGrowth = ops.ArenaGrowth[:min(len(ops.ArenaGrowth), 10)]
	if len(ops.ArenaGrowth) == 0 {
		ops.ArenaGrowth = nil
	}
	if len(c.runs) == 0 {
		return ops
	}
	for _, t := range c.byKey {
		ops.TotalS += t.TotalS
	}
	for _, t := range c.byKey {
		if t.Calls > 0 {
			t.MeanS = t.TotalS / float64(t.Calls)
		}
		if ops.TotalS > 0 {
			t.Share = t.TotalS / ops.TotalS
		}
		ops.ByType = append(ops.ByType, *t)
	}
	sort.Slice(ops.ByType, func(i, j int) bool {
		if ops.ByType[i].TotalS != ops.ByType[j].TotalS {
			return ops.ByType[i].TotalS > ops.ByType[j].TotalS
		}
		return ops.ByType[i].OpType < ops.ByType[j].OpType
	})
	ops.Nodes = c.runs[c.lastRun]
	for p, n := range c.provider[c.lastRun] {
		ops.NodesByProvider[p] = n
	}
	start := c.runStart[c.lastRun]
	origin := float64(start.UnixNano()) / 1e9
	tl := append([]report.NodeTiming(nil), c.timeline...)
	for i := range tl {
		tl[i].StartS -= origin
	}
	sort.SliceStable(tl, func(i, j int) bool { return tl[i].StartS < tl[j].StartS })
	ops.Timeline = tl
	idx := slices.Sorted(maps.Keys(c.runSpan))
	for _, i := range idx {
		sc := c.runSpan[i]
		ops.RunSpans = append(ops.RunSpans, report.SpanRef{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()})
	}
	return ops
}

func shapes(ts []profile.TypeShape) []string {
	out := make([]string, len(ts))
	for i, s := range ts {
		out[i] = s.String()
	}
	return out
}
