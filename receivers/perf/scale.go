package perf

import (
	"math"
	"math/bits"
)

// reading is what read(2) returns for an event opened with
// PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING.
type reading struct {
	value   uint64 // the count while the event was on the PMU
	enabled uint64 // ns the event was enabled (its thread ran)
	running uint64 // ns it was actually counting
}

// scaled estimates the count the event would have reached had it counted
// for all the time it was enabled.
//
// The PMU has a few counters per CPU (often 4 to 8 general-purpose ones).
// When more events are asked for than fit, the kernel multiplexes: it
// rotates the events on and off the counters, and an event counts only
// for part of the time (running < enabled). The usual estimate, as perf
// stat makes it, is value × enabled / running, which assumes the rate was
// the same while the event was off. Software events never multiplex
// (running == enabled). An event that never ran (running == 0) estimates
// to 0. The product is computed on 128 bits, so it cannot overflow; an
// estimate above 2^64-1 is capped there.
func (r reading) scaled() uint64 {
	if r.running == 0 {
		return 0
	}
	if r.running >= r.enabled {
		return r.value
	}
	hi, lo := bits.Mul64(r.value, r.enabled)
	if hi >= r.running {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, r.running)
	return q
}
