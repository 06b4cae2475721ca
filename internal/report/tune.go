package report

import "github.com/ortel-dev/ortel/internal/stats"

// Tune is the result of a tuning sweep (bench --tune): every configuration
// measured single-stream in interleaved rounds, ranked by p50.
type Tune struct {
	// Rounds is how many rounds the runs of every configuration were split
	// into; within a round the configurations run in a shuffled order, so
	// drift over the sweep hits all of them alike.
	Rounds int `json:"rounds"`
	// RunsPerConfig is the measured runs each configuration was given.
	RunsPerConfig int `json:"runs_per_config"`
	// Rule says how the best configuration is chosen.
	Rule string `json:"rule"`
	// IntervalMethod says how the p50 intervals are computed.
	IntervalMethod string `json:"interval_method"`
	// Rows holds one result per configuration, fastest p50 first; rows
	// that failed come last.
	Rows []TuneRow `json:"rows"`
	// Best is the index in Rows of the best configuration, -1 when no
	// configuration has enough successful runs to rank.
	Best int `json:"best"`
	// RunnerUp is the index of the second fastest, -1 when none.
	RunnerUp int `json:"runner_up"`
	// Distinguishable is true when the best's p50 interval lies entirely
	// below the runner-up's: the ranking of the two holds at the
	// intervals' confidence. False means the two are not told apart.
	Distinguishable bool `json:"distinguishable"`
	// TiedWith lists the rows whose p50 interval overlaps the best's.
	TiedWith []int `json:"tied_with,omitempty"`
	// Command is the ortel bench command line that reproduces the best
	// configuration.
	Command string `json:"command,omitempty"`
	// Duel is the final interleaved A/B of the best configuration (B)
	// against the default configuration (A), absent when the sweep ranked
	// none or the best is the default.
	Duel *AB `json:"duel,omitempty"`
}

// TuneRow is one configuration of a tuning sweep.
type TuneRow struct {
	// Label names the configuration, e.g. "opt all, 2 threads, sequential".
	Label          string `json:"label"`
	OptLevel       string `json:"opt_level"`
	IntraOpThreads int    `json:"intra_op_threads"`
	ExecutionMode  string `json:"execution_mode"`
	// Providers asked for (the CPU provider is always the fallback);
	// absent: CPU only.
	Providers []string `json:"providers,omitempty"`
	// CreationS is the session creation time, FirstRunS the first run's;
	// both are part of a configuration's cost and are not in Latency.
	CreationS float64 `json:"creation_s"`
	FirstRunS float64 `json:"first_run_s"`
	// Latency of the measured runs, seconds (intervals included).
	Latency stats.Summary `json:"latency"`
	// P50 is the p50 interval, copied from Latency for readers.
	P50      stats.Interval `json:"p50"`
	RunsPerS float64        `json:"runs_per_s"`
	Errors   int            `json:"errors"`
	// Error says why the configuration could not be measured (its session
	// could not be created, or its first run failed).
	Error string `json:"error,omitempty"`
	// Command is the ortel bench command line of this configuration.
	Command string `json:"command,omitempty"`
}

// Measured reports whether the row ranked: its p50 interval is bounded on
// both sides.
func (r TuneRow) Measured() bool { return r.Error == "" && r.P50.Sufficient }
