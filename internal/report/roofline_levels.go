package report

// BandwidthRoof is the bandwidth one memory level reached in the peak
// microbenchmark: an element-wise chain whose working set fits the level.
type BandwidthRoof struct {
	// Level is "L1", "L2", "L3" (data or unified caches, from sysfs) or
	// "DRAM" (a working set larger than the last cache).
	Level string `json:"level"`
	// CacheBytes is the size of one instance of the cache (0 for DRAM).
	CacheBytes int64 `json:"cache_bytes,omitempty"`
	// WorkingSetBytes is the working set that reached BytesPerS: what the
	// microbenchmark kept live (its input and intermediate tensors).
	WorkingSetBytes int64 `json:"working_set_bytes"`
	// WorkingSets are every working set measured for the level, smallest
	// first; the roof is the fastest of them.
	WorkingSets []int64 `json:"working_sets,omitempty"`
	// Threads is the intra-op thread count it ran with; 0 is ONNX
	// Runtime's default (one per physical core), as a model runs.
	Threads int `json:"threads"`
	// BytesPerS is the fastest rate reached, bytes read and written per
	// second.
	BytesPerS float64 `json:"bytes_per_s"`
}

// RoofPlacement says which bandwidth roof an operator (or op type) is
// compared with and, when it is above its roof, why.
type RoofPlacement struct {
	// Roof names the bandwidth roof: "L1", "L2", "L3" or "DRAM", the
	// smallest level its bytes fit in; "memory" when only one roof exists.
	// An op type lists the roofs of its nodes ("L2, L3").
	Roof string `json:"roof,omitempty"`
	// RoofThreads is the thread count of that roof's measurement (0: ONNX
	// Runtime's default); absent for an op type.
	RoofThreads *int `json:"roof_threads,omitempty"`
	// RoofBytesPerS is that roof's bandwidth; 0 for an op type whose nodes
	// are compared with several.
	RoofBytesPerS float64 `json:"roof_bytes_per_s,omitempty"`
	// AboveRoof explains, in plain words, why RoofShare is above 1; it is
	// never empty when RoofShare is above 1.
	AboveRoof string `json:"above_roof,omitempty"`
	// AboveReason is the kind of AboveRoof, in words every node with that
	// kind shares ("within the profiler's 1 µs resolution"), so reports
	// group the nodes above their roofs instead of repeating one sentence
	// per node; a node's only.
	AboveReason string `json:"above_reason,omitempty"`
}
