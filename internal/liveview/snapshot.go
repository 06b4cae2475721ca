package liveview

import (
	"math"
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Version is the version of the JSON API (field "version" of every payload).
const Version = 1

// Snapshot is one sample of the live view: what /api/v1/metrics/current
// returns and what the stream sends.
type Snapshot struct {
	Version   int        `json:"version"`
	Time      time.Time  `json:"time"`
	Seq       uint64     `json:"seq"`
	Runs      Runs       `json:"runs"`
	SLA       *SLAStatus `json:"sla,omitempty"`
	Hardware  Hardware   `json:"hardware"`
	Phase     *Phase     `json:"phase,omitempty"`
	Operators []Operator `json:"operators"`
	// TimelineRun is the run of the timeline /api/v1/timeline serves, absent
	// until a profiled run's operators arrived.
	TimelineRun *int64 `json:"timeline_run,omitempty"`
}

// Runs is the inference runs' state. Percentiles and the rate are over the
// last WindowSeconds; they are null while no run ended in the window.
type Runs struct {
	Total         uint64   `json:"total"`
	Errors        int64    `json:"errors"`
	InFlight      int64    `json:"in_flight"`
	WindowSeconds float64  `json:"window_seconds"`
	InWindow      uint64   `json:"in_window"`
	PerSecond     float64  `json:"per_second"`
	MeanSeconds   *float64 `json:"mean_seconds"`
	P50Seconds    *float64 `json:"p50_seconds"`
	P95Seconds    *float64 `json:"p95_seconds"`
	P99Seconds    *float64 `json:"p99_seconds"`
}

// SLAStatus is the SLA compliance over the window (only when an SLA is set).
type SLAStatus struct {
	ThresholdSeconds float64  `json:"threshold_seconds"`
	Percentile       float64  `json:"percentile"`
	Compliance       *float64 `json:"compliance"` // share of the window's runs at or under the threshold
	Met              *bool    `json:"met"`        // compliance >= percentile/100
}

// Hardware holds the headline hardware readings; a reading that no source
// provides here is absent, never zero.
type Hardware struct {
	CPUUtilization        *float64 `json:"cpu_utilization,omitempty"`         // 0..1, all CPUs (1 - idle)
	MemoryUsedBytes       *float64 `json:"memory_used_bytes,omitempty"`       // system.memory.usage, state used
	MemoryLimitBytes      *float64 `json:"memory_limit_bytes,omitempty"`      // system.memory.limit
	ProcessCPUUtilization *float64 `json:"process_cpu_utilization,omitempty"` // process.cpu.utilization, summed
	ProcessMemoryBytes    *float64 `json:"process_memory_bytes,omitempty"`    // process.memory.usage, summed
	PowerWatts            *float64 `json:"power_watts,omitempty"`             // hw.power, summed
	EnergyJoules          *float64 `json:"energy_joules,omitempty"`           // hw.energy, summed
	GPUUtilization        *float64 `json:"gpu_utilization,omitempty"`         // hw.gpu.utilization, mean
	GPUMemoryUsedBytes    *float64 `json:"gpu_memory_used_bytes,omitempty"`   // hw.gpu.memory.usage, summed
}

// Phase is what the bench is doing.
type Phase struct {
	Name     string   `json:"name"`               // loading, warm-up, measured, SLA search, profiling, finishing, done, failed
	Detail   string   `json:"detail"`             // the bench's progress line
	Progress *float64 `json:"progress,omitempty"` // 0..1 when known
}

// Operator is one operator type's cumulative profiled time.
type Operator struct {
	OpType       string  `json:"op_type"`
	Count        uint64  `json:"count"`
	TotalSeconds float64 `json:"total_seconds"`
}

// hist is a cumulative histogram merged over attribute sets: explicit
// buckets, or base-2 exponential ones (instrument/views makes ortel's
// duration histograms exponential).
type hist struct {
	bounds []float64 // explicit
	counts []uint64

	exp   bool // exponential: index i holds (2^(i/2^scale), 2^((i+1)/2^scale)]
	scale int32
	zero  uint64
	pos   map[int32]uint64

	count uint64
	sum   float64
}

// bucket is one bucket of a histogram, for quantiles.
type bucket struct {
	lo, hi float64
	n      uint64
}

// sample is what one collection read, before the window is applied.
type sample struct {
	at       time.Time
	runs     hist
	errors   int64
	inFlight int64
	hw       Hardware
	ops      []Operator
	snap     Snapshot // computed against the history when pushed
}

const (
	runDuration  = "onnxruntime.run.duration"
	runActive    = "onnxruntime.run.active"
	runErrors    = "onnxruntime.run.errors"
	nodeDuration = "onnxruntime.node.duration"
	opTypeKey    = attribute.Key("onnxruntime.node.op_type")
)

// read turns one collection into a sample.
func read(rm *metricdata.ResourceMetrics, at time.Time) sample {
	s := sample{at: at}
	var idleSum float64
	var idleN int
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case runDuration:
				addHist(&s.runs, m.Data)
			case runActive:
				s.inFlight += int64(sumOf(m.Data))
			case runErrors:
				s.errors += int64(sumOf(m.Data))
			case nodeDuration:
				s.ops = operators(m.Data)
			case "system.cpu.utilization":
				eachPoint(m.Data, func(a attribute.Set, v float64) {
					if mode, ok := a.Value("cpu.mode"); ok && mode.AsString() == "idle" {
						idleSum += v
						idleN++
					}
				})
			case "system.memory.usage":
				eachPoint(m.Data, func(a attribute.Set, v float64) {
					if st, ok := a.Value("system.memory.state"); ok && st.AsString() == "used" {
						s.hw.MemoryUsedBytes = add(s.hw.MemoryUsedBytes, v)
					}
				})
			case "system.memory.limit":
				s.hw.MemoryLimitBytes = sumPtr(m.Data)
			case "process.cpu.utilization":
				s.hw.ProcessCPUUtilization = sumPtr(m.Data)
			case "process.memory.usage":
				s.hw.ProcessMemoryBytes = sumPtr(m.Data)
			case "hw.power":
				s.hw.PowerWatts = sumPtr(m.Data)
			case "hw.energy":
				s.hw.EnergyJoules = sumPtr(m.Data)
			case "hw.gpu.utilization":
				if p := sumPtr(m.Data); p != nil {
					v := *p / float64(points(m.Data))
					s.hw.GPUUtilization = &v
				}
			case "hw.gpu.memory.usage":
				s.hw.GPUMemoryUsedBytes = sumPtr(m.Data)
			}
		}
	}
	if idleN > 0 {
		busy := math.Max(0, 1-idleSum/float64(idleN))
		s.hw.CPUUtilization = &busy
	}
	return s
}

func add(p *float64, v float64) *float64 {
	if p == nil {
		return &v
	}
	v += *p
	return &v
}

// eachPoint calls f for every number point of a gauge or sum.
func eachPoint(d metricdata.Aggregation, f func(attribute.Set, float64)) {
	switch d := d.(type) {
	case metricdata.Gauge[float64]:
		eachValue(d.DataPoints, f)
	case metricdata.Gauge[int64]:
		eachValue(d.DataPoints, f)
	case metricdata.Sum[float64]:
		eachValue(d.DataPoints, f)
	case metricdata.Sum[int64]:
		eachValue(d.DataPoints, f)
	}
}

// eachValue calls f for each point of ps, its value as a float64.
func eachValue[N int64 | float64](ps []metricdata.DataPoint[N], f func(attribute.Set, float64)) {
	for _, p := range ps {
		f(p.Attributes, float64(p.Value))
	}
}

func points(d metricdata.Aggregation) int {
	n := 0
	eachPoint(d, func(attribute.Set, float64) { n++ })
	return n
}

func sumOf(d metricdata.Aggregation) float64 {
	var t float64
	eachPoint(d, func(_ attribute.Set, v float64) { t += v })
	return t
}

// sumPtr is the sum of d's points, nil when it has none.
func sumPtr(d metricdata.Aggregation) *float64 {
	if points(d) == 0 {
		return nil
	}
	v := sumOf(d)
	return &v
}

// addHist merges d's points into h. Explicit points whose bounds differ
// from the first one's (a view changed them) are left out of the buckets
// but still counted.
func addHist(h *hist, d metricdata.Aggregation) {
	switch hd := d.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range hd.DataPoints {
			h.count += p.Count
			h.sum += p.Sum
			if h.bounds == nil {
				h.bounds = append([]float64(nil), p.Bounds...)
				h.counts = make([]uint64, len(p.BucketCounts))
			}
			if !sameBounds(h.bounds, p.Bounds) || len(p.BucketCounts) != len(h.counts) {
				continue
			}
			for i, c := range p.BucketCounts {
				h.counts[i] += c
			}
		}
	case metricdata.ExponentialHistogram[float64]:
		for _, p := range hd.DataPoints {
			h.count += p.Count
			h.sum += p.Sum
			pos := map[int32]uint64{}
			for i, c := range p.PositiveBucket.Counts {
				if c != 0 {
					pos[p.PositiveBucket.Offset+int32(i)] += c
				}
			}
			if !h.exp {
				h.exp, h.scale, h.pos = true, p.Scale, map[int32]uint64{}
			}
			h.mergeExp(p.Scale, p.ZeroCount, pos)
		}
	}
}

// mergeExp adds exponential buckets of the given scale to h, bringing both
// to the coarser scale.
func (h *hist) mergeExp(scale int32, zero uint64, pos map[int32]uint64) {
	if scale < h.scale {
		h.pos = downscale(h.pos, h.scale-scale)
		h.scale = scale
	}
	for i, c := range downscale(pos, scale-h.scale) {
		h.pos[i] += c
	}
	h.zero += zero
}

// downscale merges buckets by 2^by per step of scale.
func downscale(pos map[int32]uint64, by int32) map[int32]uint64 {
	if by <= 0 {
		return pos
	}
	out := make(map[int32]uint64, len(pos))
	for i, c := range pos {
		out[i>>by] += c
	}
	return out
}

// buckets lists h's buckets in order.
func (h hist) buckets() []bucket {
	if h.exp {
		out := []bucket{{0, 0, h.zero}}
		idx := make([]int32, 0, len(h.pos))
		for i := range h.pos {
			idx = append(idx, i)
		}
		sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
		base := math.Exp2(math.Exp2(-float64(h.scale)))
		for _, i := range idx {
			out = append(out, bucket{math.Pow(base, float64(i)), math.Pow(base, float64(i+1)), h.pos[i]})
		}
		return out
	}
	if len(h.bounds) == 0 {
		return nil
	}
	out := make([]bucket, 0, len(h.counts))
	for i, c := range h.counts {
		switch {
		case i == 0:
			out = append(out, bucket{0, h.bounds[0], c})
		case i >= len(h.bounds): // overflow: above the last bound
			out = append(out, bucket{h.bounds[len(h.bounds)-1], math.Inf(1), c})
		default:
			out = append(out, bucket{h.bounds[i-1], h.bounds[i], c})
		}
	}
	return out
}

func sameBounds(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// operators sums node.duration by op type, largest total first, at most 10.
func operators(d metricdata.Aggregation) []Operator {
	by := map[string]*Operator{}
	add := func(a attribute.Set, count uint64, sum float64) {
		op := "unknown"
		if v, ok := a.Value(opTypeKey); ok {
			op = v.AsString()
		}
		o := by[op]
		if o == nil {
			o = &Operator{OpType: op}
			by[op] = o
		}
		o.Count += count
		o.TotalSeconds += sum
	}
	switch hd := d.(type) {
	case metricdata.Histogram[float64]:
		for _, p := range hd.DataPoints {
			add(p.Attributes, p.Count, p.Sum)
		}
	case metricdata.ExponentialHistogram[float64]:
		for _, p := range hd.DataPoints {
			add(p.Attributes, p.Count, p.Sum)
		}
	}
	out := make([]Operator, 0, len(by))
	for _, o := range by {
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].TotalSeconds != out[j].TotalSeconds {
			return out[i].TotalSeconds > out[j].TotalSeconds
		}
		return out[i].OpType < out[j].OpType
	})
	if len(out) > 10 {
		out = out[:10]
	}
	return out
}

// delta is now minus then, bucket by bucket; a counter that went back (a
// restart) makes the whole of now the delta.
func delta(now, then hist) hist {
	if then.count > now.count || then.exp != now.exp {
		return now
	}
	d := hist{count: now.count - then.count, sum: now.sum - then.sum}
	if now.exp {
		// A cumulative exponential histogram only ever gets coarser.
		scale := min(now.scale, then.scale)
		n := downscale(now.pos, now.scale-scale)
		t := downscale(then.pos, then.scale-scale)
		if then.zero > now.zero {
			return now
		}
		d.exp, d.scale, d.zero, d.pos = true, scale, now.zero-then.zero, make(map[int32]uint64, len(n))
		for i, c := range n {
			if t[i] > c {
				return now
			}
			if c > t[i] {
				d.pos[i] = c - t[i]
			}
		}
		return d
	}
	if !sameBounds(now.bounds, then.bounds) || len(then.counts) != len(now.counts) {
		return now
	}
	d.bounds, d.counts = now.bounds, make([]uint64, len(now.counts))
	for i := range now.counts {
		if now.counts[i] < then.counts[i] {
			return now
		}
		d.counts[i] = now.counts[i] - then.counts[i]
	}
	return d
}

// quantile estimates the q-quantile (0..1) of h, linear inside the bucket
// that holds it (the first explicit bucket starts at 0; the overflow
// bucket is reported at the last bound). ok is false when h is empty.
func quantile(h hist, q float64) (float64, bool) {
	bs := h.buckets()
	var total uint64
	for _, b := range bs {
		total += b.n
	}
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	var seen float64
	var last bucket
	for _, b := range bs {
		if b.n == 0 {
			continue
		}
		last = b
		if seen+float64(b.n) >= rank {
			if math.IsInf(b.hi, 1) {
				return b.lo, true // the overflow bucket: reported at its start
			}
			return b.lo + (b.hi-b.lo)*(rank-seen)/float64(b.n), true
		}
		seen += float64(b.n)
	}
	if math.IsInf(last.hi, 1) {
		return last.lo, true
	}
	return last.hi, true
}

// atOrUnder estimates the share of h's values at or under x.
func atOrUnder(h hist, x float64) (float64, bool) {
	var total, under float64
	for _, b := range h.buckets() {
		total += float64(b.n)
		switch {
		case b.hi <= x:
			under += float64(b.n)
		case b.lo < x && !math.IsInf(b.hi, 1):
			under += float64(b.n) * (x - b.lo) / (b.hi - b.lo)
		}
	}
	if total == 0 {
		return 0, false
	}
	return under / total, true
}
