package report

import (
	"strconv"
	"time"
)

// Analysis is what ortel concludes from a run: the per-operator roofline
// against the machine's measured peaks, findings with their evidence and a
// recommendation each, and energy efficiency. Package internal/analysis
// computes it from the other sections, so it can be recomputed from a saved
// report (`ortel report --reanalyze`).
type Analysis struct {
	// Peaks are the machine's peak compute and memory rates the roofline
	// is drawn against; absent when they could be neither measured nor
	// read from flags.
	Peaks *Peaks `json:"peaks,omitempty"`
	// Roofline places each operator of one profiled run under the roofs;
	// absent when the run had no operator-profiling pass.
	Roofline *Roofline `json:"roofline,omitempty"`
	// Providers is where the profiled run's nodes ran: per execution
	// provider, CPU fallback and memory copies (providers.go); absent
	// when the run had no operator-profiling pass.
	Providers *Placement `json:"providers,omitempty"`
	// Findings are ranked most important first.
	Findings []Finding `json:"findings"`
	// Energy is always present: when no energy source was readable it says
	// so (Available false) and why.
	Energy Energy `json:"energy"`
	// Notes are things the analysis could not do, in plain words.
	Notes []string `json:"notes,omitempty"`
}

// Peaks are the machine's peak rates, as reached through ONNX Runtime.
type Peaks struct {
	// FLOPsPerS is the peak floating-point rate, FLOP/s.
	FLOPsPerS float64 `json:"flops_per_s"`
	// BytesPerS is the peak memory bandwidth, bytes/s.
	BytesPerS float64 `json:"bytes_per_s"`
	// Ridge is FLOPsPerS / BytesPerS: operators with a lower arithmetic
	// intensity are memory-bound, those above it compute-bound.
	Ridge float64 `json:"ridge_flops_per_byte"`
	// FLOPsSource and BytesSource say where each peak came from:
	// "measured", "cache" or "flag".
	FLOPsSource string `json:"flops_source"`
	BytesSource string `json:"bytes_source"`
	// Machine is the key the measurement is cached under.
	Machine string `json:"machine_key,omitempty"`
	// MeasuredAt is when the microbenchmark last ran on this machine (the
	// cache keeps the highest of all its measurements).
	MeasuredAt *time.Time `json:"measured_at,omitempty"`
	// Method describes the microbenchmark.
	Method string `json:"method,omitempty"`
	// Levels are the bandwidth roofs per memory level (L1, L2, L3, DRAM),
	// each measured at a working set that fits the level; absent when the
	// cache sizes could not be read or the bandwidth came from a flag
	// (then BytesPerS is the only roof). See roofline_levels.go.
	Levels []BandwidthRoof `json:"levels,omitempty"`
	// Caches says where the cache sizes came from, or why there are none.
	Caches string `json:"caches,omitempty"`
}

// Roofline is the per-operator roofline of one profiled run: the operators
// of Operators.Timeline with their floating-point work, bytes moved,
// arithmetic intensity and achieved rates.
type Roofline struct {
	// Nodes is the number of operators of the run.
	Nodes int `json:"nodes"`
	// TimeS is the sum of the operators' durations.
	TimeS float64 `json:"time_s"`
	// FLOPs sums the operators whose FLOPs are known.
	FLOPs float64 `json:"flops"`
	// Bytes sums activation, parameter and output bytes of every operator.
	Bytes float64 `json:"bytes"`
	// KnownNodes counts operators whose FLOPs are known (zero for pure data
	// movement counts as known).
	KnownNodes int `json:"known_nodes"`
	// KnownTimeShare is the share of TimeS spent in operators whose FLOPs
	// are known.
	KnownTimeShare float64 `json:"known_time_share"`
	// UnknownOpTypes lists op types whose FLOPs could not be derived from
	// the recorded shapes (they are never guessed).
	UnknownOpTypes []string `json:"unknown_op_types,omitempty"`
	// ByOpType aggregates the operators per (op type, provider), by time.
	ByOpType []RooflineOpType `json:"by_op_type"`
	// Ops is every operator of the run, in timeline order.
	Ops []RooflineOp `json:"ops"`
}

// RooflinePoint is an operator's (or op type's) place on the roofline.
// Pointer fields are null when the FLOPs are unknown.
type RooflinePoint struct {
	// FLOPs is the floating-point work.
	FLOPs *float64 `json:"flops"`
	// Bytes is activation + parameter + output bytes.
	Bytes float64 `json:"bytes"`
	// Intensity is FLOPs / Bytes, FLOP per byte.
	Intensity *float64 `json:"intensity"`
	// FLOPsPerS is the achieved rate, FLOPs / duration.
	FLOPsPerS *float64 `json:"flops_per_s"`
	// BytesPerS is the achieved traffic, Bytes / duration.
	BytesPerS float64 `json:"bytes_per_s"`
	// Bound is "compute" (intensity at or above the ridge of its roof:
	// peak FLOP/s over the roof's bytes/s), "memory" (below it, including
	// pure data movement) or "unknown" (FLOPs or peaks unknown).
	Bound string `json:"bound"`
	// RoofShare is the achieved rate over the attainable one:
	// FLOPsPerS / min(peak FLOP/s, Intensity × roof bytes/s); for pure
	// data movement BytesPerS / roof bytes/s, where the roof is the
	// bandwidth of RoofPlacement. Above 1 only with AboveRoof saying why.
	RoofShare *float64 `json:"roof_share"`
	RoofPlacement
}

// RooflineOp is one operator of the profiled run.
type RooflineOp struct {
	Name     string  `json:"name"`
	OpType   string  `json:"op_type"`
	Provider string  `json:"provider"`
	DurS     float64 `json:"dur_s"`
	// Class names the FLOP formula used: "matmul", "conv",
	// "conv_transpose", "attention", "elementwise", "reduction",
	// "softmax", "normalization", "pooling", "data_movement" or
	// "unknown".
	Class string `json:"class"`
	// Unknown says why the FLOPs are unknown, when they are.
	Unknown string `json:"unknown_reason,omitempty"`
	RooflinePoint
}

// RooflineOpType aggregates the operators of one op type and provider.
// FLOPs, Intensity and FLOPsPerS cover only the operators with known
// FLOPs; they are null when none is known.
type RooflineOpType struct {
	OpType   string `json:"op_type"`
	Provider string `json:"provider"`
	Nodes    int    `json:"nodes"`
	// UnknownNodes counts operators of the type whose FLOPs are unknown.
	UnknownNodes int     `json:"unknown_nodes"`
	TimeS        float64 `json:"time_s"`
	// Share is the op type's self time over all profiled runs, of all
	// operators' (the top-operators table's share, see ShareBasis); the
	// one run's share in reports without per-type totals.
	Share float64 `json:"share"`
	RooflinePoint
}

// Finding is one conclusion of the rule set, with its numbers.
type Finding struct {
	// Rule is the identifier of the rule that fired, e.g.
	// "memory-bound-hot-ops" (see docs/report-schema.md for the list).
	Rule string `json:"rule"`
	// Severity is "high", "medium", "low" or "info".
	Severity string `json:"severity"`
	// Impact is the share (0..1) of operator time or latency the finding
	// concerns; findings are ranked by severity, then impact.
	Impact float64 `json:"impact"`
	// Title is one line; Detail explains it with the numbers.
	Title  string `json:"title"`
	Detail string `json:"detail"`
	// Recommendation says what to try.
	Recommendation string `json:"recommendation"`
	// Check is the command that tests the recommendation on this model
	// ("ortel bench paddleocr-det --warmup auto"); empty when the fix is
	// in the model itself.
	Check string `json:"check,omitempty"`
	// Evidence holds the numbers the rule looked at.
	Evidence []Evidence `json:"evidence"`
}

// Evidence is one number (or short text) behind a finding.
type Evidence struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	// Unit is UCUM-like: "s", "1" (a ratio), "By/s", "{flop}/s", "{node}".
	Unit string `json:"unit,omitempty"`
	// Text is a non-numeric detail (op types, node names).
	Text string `json:"text,omitempty"`
}

// Energy is the energy efficiency of the measured phase.
type Energy struct {
	// Available is false when no energy source could be read; Reason
	// then says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Inferences is the number of runs the energy is divided by.
	Inferences int `json:"inferences"`
	// JoulesPerInference sums the sources counted in the total.
	JoulesPerInference float64 `json:"joules_per_inference,omitempty"`
	// DynamicJoulesPerInference is the energy above the idle baseline
	// measured before the run; null without a baseline.
	DynamicJoulesPerInference *float64 `json:"dynamic_joules_per_inference,omitempty"`
	// InferencesPerJoule is 1 / JoulesPerInference.
	InferencesPerJoule float64 `json:"inferences_per_joule,omitempty"`
	// AvgW and MaxW are the total power (sources counted in the total).
	AvgW float64 `json:"avg_w,omitempty"`
	MaxW float64 `json:"max_w,omitempty"`
	// GFLOPsPerWatt is the run's FLOP rate per watt: the profiled run's
	// known FLOPs per inference / JoulesPerInference / 1e9; null when FLOPs
	// are unknown.
	GFLOPsPerWatt *float64 `json:"gflops_per_watt,omitempty"`
	// Sources are the energy readings, one per component.
	Sources []EnergySource `json:"sources,omitempty"`
	// Carbon is the emissions estimate.
	Carbon Carbon `json:"carbon"`
}

// EnergySource is one component's energy over the measured phase.
type EnergySource struct {
	Name string `json:"name"`
	// Type is the hw.type: "cpu", "gpu", "memory", "system", ...
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`
	// Joules is the energy over the measured phase.
	Joules             float64 `json:"joules"`
	JoulesPerInference float64 `json:"joules_per_inference"`
	// DynamicJoulesPerInference is the energy above IdleW; null without a
	// baseline.
	DynamicJoulesPerInference *float64 `json:"dynamic_joules_per_inference,omitempty"`
	IdleW                     *float64 `json:"idle_w,omitempty"`
	AvgW                      float64  `json:"avg_w"`
	MaxW                      float64  `json:"max_w,omitempty"`
	// InTotal is false for a source contained in another one (RAPL dram
	// inside package, say), so the total does not count it twice.
	InTotal bool `json:"in_total"`
}

// Carbon estimates emissions from the energy and a grid carbon intensity.
type Carbon struct {
	// GridIntensity is gCO2e per kWh; GridSource says where it came from.
	GridIntensity float64 `json:"grid_intensity_g_per_kwh"`
	GridSource    string  `json:"grid_intensity_source"`
	// GramsPerInference and GramsPer1000 are gCO2e; null without energy.
	GramsPerInference *float64 `json:"g_co2e_per_inference,omitempty"`
	GramsPer1000      *float64 `json:"g_co2e_per_1000_inferences,omitempty"`
}

// ShareBasis names the one share every operator table uses (top
// operators, roofline, findings): an op type's self time over all
// profiled runs, of all operators' self time. It is "" when the report
// has no profiled runs; callers put "share" before it.
func ShareBasis(o *Operators) string {
	if o == nil || o.ProfiledRuns == 0 {
		return ""
	}
	if o.ProfiledRuns == 1 {
		return "of all operators' self time in the profiled run"
	}
	return "of all operators' self time over the " + strconv.Itoa(o.ProfiledRuns) + " profiled runs"
}
