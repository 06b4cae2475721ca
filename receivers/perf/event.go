package perf

import "github.com/ortel-dev/ortel/semconv"

// Event is a perf event the receiver counts, named as perf stat names it.
type Event string

// The events, hardware counters first.
const (
	Instructions    Event = "instructions"
	Cycles          Event = "cycles"
	CacheReferences Event = "cache-references"
	CacheMisses     Event = "cache-misses"
	BranchMisses    Event = "branch-misses"
	ContextSwitches Event = "context-switches"
	PageFaults      Event = "page-faults"
	CPUMigrations   Event = "cpu-migrations"
)

// The parts of the receiver: groups of events probed and reported on
// separately, because a virtual machine without a PMU has the second but
// not the first.
const (
	HardwarePart = "hardware counters"
	SoftwarePart = "software events"
)

// eventInfo describes an event.
type eventInfo struct {
	event    Event
	metric   string // the counter it is reported as
	hardware bool   // counted by the CPU's PMU rather than the kernel
	kernel   bool   // happens in the kernel: reads 0 when kernel events are excluded
}

// events lists every event; the index is the event's number in a target.
var events = []eventInfo{
	{Instructions, semconv.OrtelPerfInstructionsName, true, false},
	{Cycles, semconv.OrtelPerfCyclesName, true, false},
	{CacheReferences, semconv.OrtelPerfCacheReferencesName, true, false},
	{CacheMisses, semconv.OrtelPerfCacheMissesName, true, false},
	{BranchMisses, semconv.OrtelPerfBranchMissesName, true, false},
	{ContextSwitches, semconv.OrtelPerfContextSwitchesName, false, true},
	{PageFaults, semconv.OrtelPerfPageFaultsName, false, false},
	{CPUMigrations, semconv.OrtelPerfCPUMigrationsName, false, true},
}

// Event numbers, indexes into events.
const (
	evInstructions = iota
	evCycles
	evCacheReferences
	evCacheMisses
	evBranchMisses
	evContextSwitches
	evPageFaults
	evCPUMigrations
	numEvents
)
