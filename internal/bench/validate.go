package bench

import (
	"math"
	"runtime"

	"github.com/ortel-dev/ortel/internal/configerr"
)

// invalid is a Config that breaks one of bench's rules: its message names
// the fields as {Field} (see configerr), so ortel names the flags instead.
func invalid(format string, args ...any) *configerr.Error {
	return configerr.New("bench", format, args...)
}

// Limits of the Config, checked by Validate.
const (
	// MaxConcurrency is the most workers of a load scenario.
	MaxConcurrency = 1024
	// MaxSLATrials is the most trials of the SLA search.
	MaxSLATrials = 100
	// MaxGenerate is the most tokens of one generation, and the longest
	// encoder states fed to a decoder.
	MaxGenerate = 100000
	// MaxProfileRuns is the most runs of the operator-profiling pass: the
	// profiler keeps every event in memory.
	MaxProfileRuns = 1000
)

// Validate returns the first rule c breaks — a value out of its range, or
// options that exclude each other — as a *configerr.Error whose message
// names the fields, or nil. It is the one place bench's option rules are
// written: Run calls it, and ortel calls it before any work starts.
//
// Validate checks c as given. Run first fills the defaults of the zero
// fields that have one (Runs, WarmupMax, Scenario, Sessions, Concurrency,
// TrialDuration, MaxTrials, SLABudget, PromptTokens, Batch, Tune.Rounds), so a caller
// that validates before Run sets those itself, as ortel's flags do.
func (c Config) Validate() error {
	for _, check := range []func() error{c.validateLoad, c.validateSLA, c.validateGenerate, c.validateSession, c.validateProfile, c.validateTune} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// workers is the number of workers the scenario runs with c.Concurrency
// (0: the scenario's default).
func (c Config) workers() int {
	if c.Concurrency > 0 {
		return c.Concurrency
	}
	if c.Scenario == Concurrent || c.Scenario == Offline {
		return runtime.NumCPU()
	}
	return 1
}

// validateLoad checks how much is measured and under which load.
func (c Config) validateLoad() error {
	if _, err := ParseScenario(string(c.Scenario)); err != nil {
		return err
	}
	if _, err := ParseSessionMode(string(c.Sessions)); err != nil {
		return err
	}
	switch {
	case c.Auto == nil && c.Runs <= 0 && c.Duration <= 0:
		return invalid("{Runs} must be 1 or more (got %d)", c.Runs)
	case c.Duration < 0:
		return invalid("{Duration} must not be negative (got %s)", c.Duration)
	case c.Warmup < 0:
		return invalid("{Warmup} must be 0 or more runs (got %d)", c.Warmup)
	case c.WarmupMax < 1:
		return invalid("{WarmupMax} must be 1 or more (got %d)", c.WarmupMax)
	case c.Concurrency < 0:
		return invalid("{Concurrency} must be 1 or more (got %d)", c.Concurrency)
	case c.Concurrency > MaxConcurrency:
		return invalid("{Concurrency} %d is too many workers (at most %d)", c.Concurrency, MaxConcurrency)
	case c.Scenario == SingleStream && c.Concurrency > 1:
		return invalid("{Concurrency} %d needs {Scenario} concurrent, server or offline (single-stream runs one request at a time)", c.Concurrency)
	case c.Sessions == PerWorkerSessions && c.Scenario == SingleStream:
		return invalid("{Sessions} per-worker needs several workers: use {Scenario} concurrent, server or offline")
	case c.Sessions == PerWorkerSessions && c.workers() < 2:
		return invalid("{Sessions} per-worker needs 2 workers or more (got {Concurrency} %d)", c.workers())
	case c.QPS < 0 || math.IsNaN(c.QPS) || math.IsInf(c.QPS, 0):
		return invalid("{QPS} must be a positive rate in requests per second (got %g)", c.QPS)
	case c.QPS > 0 && c.Scenario != Server:
		return invalid("{QPS} applies to {Scenario} server only")
	case c.Scenario == Server && c.QPS == 0 && c.SLA == nil:
		return invalid("{Scenario} server needs a target rate ({QPS} 20) or an SLA whose peak rate it searches ({SLA} 50ms)")
	case c.Batch < 0:
		return invalid("{Batches} %d: a batch size is 1 or more", c.Batch)
	case len(c.Batches) > 1 && c.Scenario != SingleStream:
		return invalid("{Batches} with several sizes measures each single-stream; drop {Scenario} %s", c.Scenario)
	}
	if c.Auto != nil {
		return c.validateAuto()
	}
	return nil
}

// validateAuto checks --runs auto's rule and what it combines with.
func (c Config) validateAuto() error {
	a := c.Auto
	switch {
	case c.Scenario == Server || c.Scenario == Offline:
		return invalid("{Auto} needs {Scenario} single-stream or concurrent (the %s scenario takes a number of requests or a duration)", c.Scenario)
	case len(c.Batches) > 1 || c.Generate > 0:
		return invalid("{Auto} applies to one measured phase; give the batch sweep or the generation a number of runs ({Runs})")
	case !(a.Percentile > 0 && a.Percentile < 100):
		return invalid("{Auto.Percentile} %v: want a percentile between 0 and 100, such as p99 or 95", a.Percentile)
	case !(a.Width > 0 && a.Width < 10):
		return invalid("{Auto.Width} %v: want a positive width relative to the percentile, such as 5%% or 0.05", a.Width)
	case a.Limit < 0:
		return invalid("{Duration} must not be negative (got %s)", a.Limit)
	case a.MaxRuns < 0:
		return invalid("{Auto.MaxRuns} must not be negative (got %d)", a.MaxRuns)
	}
	return nil
}

// validateSLA checks the SLA and its search.
func (c Config) validateSLA() error {
	switch {
	case c.TrialDuration <= 0:
		return invalid("{TrialDuration} must be positive (got %s)", c.TrialDuration)
	case c.SLABudget <= 0:
		return invalid("{SLABudget} must be positive (got %s)", c.SLABudget)
	case c.MaxTrials < 1 || c.MaxTrials > MaxSLATrials:
		return invalid("{MaxTrials} must be from 1 to %d (got %d)", MaxSLATrials, c.MaxTrials)
	case c.SLA != nil && c.SLA.Threshold <= 0:
		return invalid("{SLA} %s: the threshold must be a positive duration", c.SLA.Threshold)
	case c.SLA != nil && !(c.SLA.Percentile > 0 && c.SLA.Percentile < 100):
		return invalid("{SLA}: the percentile %v must be between 0 and 100", c.SLA.Percentile)
	}
	return nil
}

// validateGenerate checks LLM generation and what it combines with.
func (c Config) validateGenerate() error {
	switch {
	case c.Generate < 0:
		return invalid("{Generate} must be 0 (off) or a number of tokens (got %d)", c.Generate)
	case c.Generate > MaxGenerate:
		return invalid("{Generate} %d is too many tokens (at most %d)", c.Generate, MaxGenerate)
	case c.PromptTokens < 1:
		return invalid("{PromptTokens} must be 1 or more (got %d)", c.PromptTokens)
	case c.EncoderTokens < 0 || c.EncoderTokens > MaxGenerate:
		return invalid("{EncoderTokens} must be from 1 to %d, or 0 for the model's length (got %d)", MaxGenerate, c.EncoderTokens)
	case c.EncoderPath != "" && c.EncoderTokens != 0:
		return invalid("{EncoderPath}'s output sets the encoder states' length; drop {EncoderTokens}")
	case c.EncoderPath != "" && c.Generate == 0:
		return invalid("{EncoderPath} feeds the decoder that {Generate} drives; add {Generate} N")
	case c.Generate > 0 && (len(c.Batches) > 1 || c.Batch > 1):
		return invalid("{Generate} runs one sequence at a time; drop {Batches}")
	case c.Generate > 0 && c.Scenario != SingleStream:
		return invalid("{Generate} runs single-stream; drop {Scenario} %s", c.Scenario)
	case c.Generate > 0 && c.SLA != nil:
		return invalid("{SLA} checks request latency; with {Generate} read the time to first token and per output token instead")
	}
	return nil
}

// validateSession checks the session options.
func (c Config) validateSession() error {
	switch {
	case c.IntraOpThreads < 0:
		return invalid("{IntraOpThreads} must be 0 (ORT's choice) or more (got %d)", c.IntraOpThreads)
	case c.InterOpThreads < 0:
		return invalid("{InterOpThreads} must be 0 (ORT's choice) or more (got %d)", c.InterOpThreads)
	}
	return c.Session.validate()
}

// validateProfile checks the operator-profiling pass.
func (c Config) validateProfile() error {
	switch {
	case c.ProfileRuns < 0:
		return invalid("{ProfileRuns} must be 0 (skip) or more (got %d)", c.ProfileRuns)
	case c.ProfileRuns > MaxProfileRuns:
		return invalid("{ProfileRuns} %d is too many: the profiler keeps every event in memory (at most %d)", c.ProfileRuns, MaxProfileRuns)
	}
	return nil
}

// validateTune checks what a tuning sweep cannot combine with.
func (c Config) validateTune() error {
	if c.Tune == nil {
		return nil
	}
	switch need := TuneMinRuns(); {
	case c.Tune.Rounds < 1:
		return invalid("{Tune.Rounds} must be 1 or more (got %d)", c.Tune.Rounds)
	case c.Runs > 0 && c.Runs < need:
		return invalid("{Tune} ranks configurations by their p50 interval, which needs {Runs} %d or more (got %d)", need, c.Runs)
	case c.Scenario != SingleStream:
		return invalid("{Tune} measures every configuration single-stream; drop {Scenario} %s", c.Scenario)
	case len(c.Batches) > 1:
		return invalid("{Tune} measures one batch size; give {Batches} one size")
	case c.Generate > 0:
		return invalid("{Tune} measures request latency; drop {Generate}")
	case c.Auto != nil || c.Duration > 0:
		return invalid("{Tune} gives every configuration {Runs} runs; {Auto} and {Duration} do not apply")
	case c.Session.SaveOptimized != "":
		return invalid("{Tune} creates a session per configuration; save the best one's optimized model afterwards with its command line and {Session.SaveOptimized}")
	case c.SLA != nil:
		return invalid("{Tune} ranks configurations by p50; check {SLA} on the best one afterwards with its command line")
	}
	return nil
}
