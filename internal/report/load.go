package report

import "github.com/ortel-dev/ortel/internal/stats"

// Warmup describes how the session warmed up: how ONNX Runtime split the
// session's creation, the latency of the first runs, and when latency
// reached its steady state.
type Warmup struct {
	// ModelLoadS and InitializationS split session creation as ONNX
	// Runtime's profiler reports it (its model_loading_uri and
	// session_initialization events), read from one short-lived profiled
	// session. Zero when the profiler did not report them.
	ModelLoadS      float64 `json:"model_load_s,omitempty"`
	InitializationS float64 `json:"session_initialization_s,omitempty"`

	// Mode is "fixed" (--warmup N) or "auto" (--warmup auto: warm up until
	// steady state, at most MaxRuns runs).
	Mode    string `json:"mode"`
	Runs    int    `json:"runs"` // warm-up runs after the first run
	MaxRuns int    `json:"max_runs,omitempty"`

	// CurveS is the latency of the first run followed by every warm-up
	// run, in seconds: the warm-up curve.
	CurveS []float64 `json:"curve_s"`

	// Steady state, by the rolling-median stability test: steady state
	// starts at run j (0 = the first run) when the median of runs
	// [j, j+Window) and the median of runs [j+Window, j+2·Window) differ by
	// at most Tolerance times the former. The first run is always cold, so
	// j >= 1. The test runs over the warm-up curve, then (single-stream)
	// the measured runs.
	Method    string  `json:"method"`
	Window    int     `json:"window"`
	Tolerance float64 `json:"tolerance"`
	Steady    bool    `json:"steady"`
	// SteadyAfterRuns is j: the runs it took to reach steady state.
	SteadyAfterRuns int `json:"steady_after_runs,omitempty"`
	// DetectedAfterRuns is j + 2·Window: the runs the test needed to see it.
	DetectedAfterRuns int `json:"detected_after_runs,omitempty"`
	// SteadyS is the time from the start of the first run to the start of
	// run j; SteadyMedianS the median latency of runs [j, j+Window).
	SteadyS       float64 `json:"steady_s,omitempty"`
	SteadyMedianS float64 `json:"steady_median_s,omitempty"`
}

// Jitter describes run-to-run variation of the measured latencies, in run
// (issue) order.
type Jitter struct {
	StdS float64 `json:"std_s"`
	// TailRatio is p99 / p50.
	TailRatio float64 `json:"p99_over_p50"`
	// MaxDeltaS is the largest |latency(i) - latency(i-1)|; MeanDeltaS
	// their mean.
	MaxDeltaS  float64 `json:"max_consecutive_delta_s"`
	MeanDeltaS float64 `json:"mean_consecutive_delta_s"`
	// An outlier is a latency above ThresholdS = p50 + K·max(1.4826·MAD,
	// 0.01·p50), where MAD is the median absolute deviation from the
	// median: K robust standard deviations above the median.
	MADS         float64   `json:"mad_s"`
	K            float64   `json:"k"`
	ThresholdS   float64   `json:"outlier_threshold_s"`
	OutlierCount int       `json:"outlier_count"`
	Outliers     []Outlier `json:"outliers,omitempty"` // the slowest, at most MaxOutliers, in run order
}

// MaxOutliers caps the outliers a Jitter lists.
const MaxOutliers = 50

// Outlier is one outlying run.
type Outlier struct {
	Run      int     `json:"run"`      // index in the measured phase, from 0
	OffsetS  float64 `json:"offset_s"` // its start (or scheduled arrival) since the phase began
	LatencyS float64 `json:"latency_s"`
}

// Load holds the result of a load scenario. The latency distribution of its
// measured phase is the report's Latency; its throughput the report's
// Throughput.
type Load struct {
	Scenario    string `json:"scenario"` // single-stream, concurrent, server, offline
	Concurrency int    `json:"concurrency"`
	Sessions    string `json:"sessions"` // shared or per-worker
	// LatencyFrom says where a request's latency starts: "issue" (closed
	// loop: when the worker started it), "scheduled_arrival" (server: when
	// the arrival was due, so queueing counts) or "run_start" (offline).
	LatencyFrom string `json:"latency_from"`

	TargetQPS   float64 `json:"target_qps,omitempty"` // server
	AchievedQPS float64 `json:"achieved_qps"`
	ItemsPerS   float64 `json:"items_per_s"`
	Requests    int     `json:"requests"`
	Completed   int     `json:"completed"`
	Errors      int     `json:"errors"`
	WallS       float64 `json:"wall_s"`

	// Queueing (server and offline): time from scheduled arrival to the
	// start of the run, and the deepest the queue got.
	QueueWait     *stats.Summary `json:"queue_wait_s,omitempty"`
	MaxQueueDepth int64          `json:"max_queue_depth,omitempty"`

	SLA    *SLAResult `json:"sla,omitempty"`
	Search *SLASearch `json:"sla_search,omitempty"`
}

// SLAResult checks one set of latencies against an SLA.
type SLAResult struct {
	ThresholdS float64 `json:"threshold_s"`
	Percentile float64 `json:"percentile"` // e.g. 99
	// ObservedS is the nearest-rank percentile (the ⌈P·n/100⌉-th smallest
	// latency, failed requests counted as infinitely slow); absent when
	// that rank falls on a failed request.
	ObservedS *float64 `json:"observed_s,omitempty"`
	Requests  int      `json:"requests"`
	// Violations counts requests over the threshold plus failed ones.
	Violations int     `json:"violations"`
	Compliance float64 `json:"compliance"` // 1 - Violations/Requests
	// Met: at most n - ⌈P·n/100⌉ violations, i.e. ObservedS <= ThresholdS.
	Met bool `json:"met"`
	// Verdict is the early-stopping verdict at Confidence (see
	// stats.EarlyStoppingMethod): "met", "missed" or "insufficient
	// requests". Absent in reports written before it existed.
	Verdict    string  `json:"verdict,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
	// RequestsNeeded is, when the verdict is undecided and the observed
	// violations are below the allowed share, the fewest requests that
	// would prove the SLA met with as many violations (LoadGen's early
	// stopping count; 459 for p99 at 99% with none).
	RequestsNeeded int `json:"requests_needed,omitempty"`
}

// SLASearch is the search for the highest server-scenario rate whose
// latency percentile meets the SLA: a bracket of proven verdicts, found
// within a time budget.
type SLASearch struct {
	Method string `json:"method"`
	// Status says what the search established: "bracketed" (both ends
	// proven), "lower bound only", "upper bound only", "undecided" (no
	// trial proved anything) or "not provable in budget" (no trial could
	// hold the requests a verdict needs). Absent in older reports.
	Status string `json:"status,omitempty"`
	// PeakQPS is the bracket's lower end: the highest target rate proven
	// to meet the SLA below UpperQPS; 0 when none was.
	PeakQPS float64 `json:"peak_qps"`
	Found   bool    `json:"found"`
	// UpperQPS is the bracket's upper end: the lowest rate proven to miss
	// it (0 if none was).
	UpperQPS float64 `json:"upper_qps,omitempty"`
	// Confidence is the bracket's: 1 - (1 - 0.99) per decided trial
	// (Bonferroni); 0 when no trial decided.
	Confidence float64 `json:"confidence,omitempty"`
	// Percentile is the percentile the trials were judged at: the SLA's,
	// or a lower one when the SLA's was not provable in the budget.
	Percentile float64 `json:"judged_percentile,omitempty"`
	// BudgetS is the time the search was allowed, ElapsedS the time it
	// took (the closed-loop phase and every trial).
	BudgetS  float64 `json:"budget_s,omitempty"`
	ElapsedS float64 `json:"elapsed_s,omitempty"`
	// ClosedLoopQPS is the rate the workers sustained in the closed-loop
	// phase before the trials; PredictedQPS the rate a queue model fed
	// with that phase's service times predicted to meet the SLA.
	ClosedLoopQPS float64 `json:"closed_loop_qps,omitempty"`
	PredictedQPS  float64 `json:"predicted_qps,omitempty"`
	// Disturbed counts the trials the interference monitor judged
	// disturbed (repeated once, never counted).
	Disturbed int     `json:"disturbed_trials,omitempty"`
	Trials    []Trial `json:"trials"`
	Note      string  `json:"note,omitempty"`
}

// Trial is one bounded open-loop run of the SLA search. Planned is the
// most requests it could hold: a trial stops once its verdict is known
// (see bench's trialPhase).
type Trial struct {
	TargetQPS   float64   `json:"target_qps"`
	AchievedQPS float64   `json:"achieved_qps"`
	Planned     int       `json:"planned"`
	Completed   int       `json:"completed"`
	WallS       float64   `json:"wall_s"`
	P50S        float64   `json:"p50_s"`
	P99S        float64   `json:"p99_s"`
	SLA         SLAResult `json:"sla"`
	// Interval bounds the judged percentile of the trial's latencies
	// (order-statistic interval, 95%).
	Interval *stats.Interval `json:"interval,omitempty"`
	// Aborted: the trial stopped early because its violations already
	// exceeded what the SLA allows.
	Aborted bool `json:"aborted,omitempty"`
	// Repeat: this trial repeated one at the same rate (disturbed).
	Repeat bool `json:"repeat,omitempty"`
	// Probe: the short first trial well above the predicted rate, given
	// only the time its first look takes, which bounds the bracket from
	// above when it misses.
	Probe bool `json:"probe,omitempty"`
	// Measurement is the interference monitor's verdict on the trial's
	// machine, "stable" or "disturbed" (absent without a monitor; the
	// drift test left out); Disturbance its reasons. A disturbed trial
	// counts only when it proved the SLA met.
	Measurement string    `json:"measurement,omitempty"`
	Disturbance string    `json:"disturbance,omitempty"`
	Hardware    *Hardware `json:"hardware,omitempty"`
}

// BatchSweep holds one result per batch size.
type BatchSweep struct {
	// ReferenceBatch is the smallest batch size of the sweep: speed-up and
	// efficiency are relative to it.
	ReferenceBatch int64       `json:"reference_batch"`
	Steps          []BatchStep `json:"steps"`
	// BestBatch has the highest items/s (among the steps meeting the SLA
	// when one was given); 0 when none qualifies.
	BestBatch int64  `json:"best_batch"`
	BestRule  string `json:"best_rule"`
}

// BatchStep is the measurement of one batch size.
type BatchStep struct {
	Batch     int64         `json:"batch"`
	Latency   stats.Summary `json:"latency_s"`
	Errors    int           `json:"errors"`
	RunsPerS  float64       `json:"runs_per_s"`
	ItemsPerS float64       `json:"items_per_s"`
	// Speedup = items/s(b) / items/s(reference); Efficiency = Speedup /
	// (b / reference): 1 when a batch of b costs no more time than one of
	// the reference size, reference/b when batching gains nothing.
	Speedup    float64    `json:"speedup"`
	Efficiency float64    `json:"scaling_efficiency"`
	SLA        *SLAResult `json:"sla,omitempty"`
	Hardware   *Hardware  `json:"hardware,omitempty"`
}

// Generation holds LLM generation metrics (TTFT, TPOT) of the measured
// generations.
type Generation struct {
	Generations  int `json:"generations"`
	PromptTokens int `json:"prompt_tokens"`
	OutputTokens int `json:"output_tokens"` // per generation
	Batch        int `json:"batch"`
	// The decoder, as read from its inputs and outputs.
	Layers  int `json:"layers"`
	Heads   int `json:"heads"`
	HeadDim int `json:"head_dim"`
	Vocab   int `json:"vocab"`

	// TTFT is the time to first token (the prefill), TPOT the time per
	// output token after the first, one value per generation, in seconds.
	TTFT stats.Summary `json:"ttft_s"`
	TPOT stats.Summary `json:"tpot_s"`
	// TokensPerS: output tokens per second of each generation, start to
	// last token; DecodeTokensPerS: tokens after the first over the decode
	// phase.
	TokensPerS       stats.Summary `json:"tokens_per_s"`
	DecodeTokensPerS stats.Summary `json:"decode_tokens_per_s"`
	// KVCacheBytes is the size of the present.* tensors after the last
	// token.
	KVCacheBytes int64 `json:"kv_cache_bytes"`
	// KVCacheBytesPerStep is the cache held after each step of the first
	// measured generation (the prefill, then each decoded token);
	// KVCacheBytesPerToken what one more token adds, from the cache
	// inputs' declared heads and head sizes.
	KVCacheBytesPerStep  []int64 `json:"kv_cache_bytes_per_step,omitempty"`
	KVCacheBytesPerToken int64   `json:"kv_cache_bytes_per_token,omitempty"`
	// EncoderTokens is the length of the encoder states fed to the
	// decoder of an encoder-decoder (0: a decoder-only model).
	EncoderTokens int `json:"encoder_tokens,omitempty"`
	// EncoderStates says where the encoder states came from: seeded
	// values, or the output of an encoder run once.
	EncoderStates string `json:"encoder_states,omitempty"`
	// GeneratedIDs are the token ids the first measured generation chose
	// (greedy argmax), to check runs repeat.
	GeneratedIDs []int64 `json:"generated_ids,omitempty"`
}

// Outcome is a trial's verdict in words: "met" (or "met, though
// disturbed") when its early-stopping verdict proves the SLA met, else
// "disturbed, not counted" when the interference monitor judged it
// disturbed, "missed" when that verdict is missed, and otherwise says the
// trial decided nothing (also when it stopped early with too many over to
// prove it met but too few to prove it missed), with which side of the
// threshold its percentile fell on (a p95 of 1.918ms under a 2ms SLA from
// too few requests is not "missed"). The search counts only "met" as a
// pass.
func (t Trial) Outcome() string {
	switch {
	case t.SLA.Met && t.Measurement == MeasurementDisturbed:
		return "met, though disturbed"
	case t.SLA.Met:
		return "met"
	case t.Measurement == MeasurementDisturbed:
		return "disturbed, not counted"
	case t.Aborted && (t.SLA.Verdict == "missed" || t.SLA.Verdict == ""):
		return "missed (stopped early)"
	case t.Aborted:
		return "stopped undecided: too many over to prove it met, too few to prove it missed"
	case t.SLA.Verdict == "" || t.SLA.Verdict == "missed":
		return "missed"
	case t.SLA.ObservedS != nil && *t.SLA.ObservedS <= t.SLA.ThresholdS:
		return "under the threshold, too few requests to prove it met"
	}
	return "over the threshold, too few requests to prove it missed"
}
