package main

import "github.com/ortel-dev/ortel/internal/configerr"

// engineFlags names, per engine and Config field, the flag that sets the
// field: an engine's errors name its fields (configerr), and ortel prints
// the flag instead, so a rule is written once, in the engine, and the
// user still reads the flag they typed. TestEveryEngineFieldHasAFlag
// checks that every field an engine's error names is here.
var engineFlags = map[string]map[string]string{
	"bench": {
		"Runs": "--runs", "Duration": "--duration", "Auto": "--runs auto",
		"Auto.Percentile": "--auto-percentile", "Auto.Width": "--auto-width", "Auto.MaxRuns": "--runs auto",
		"Warmup": "--warmup", "WarmupMax": "--warmup-max",
		"Scenario": "--scenario", "Concurrency": "--concurrency", "Sessions": "--sessions", "QPS": "--qps",
		"SLA": "--sla", "TrialDuration": "--trial-duration", "MaxTrials": "--sla-trials", "SLABudget": "--sla-budget",
		"Batches":  "--batch",
		"Generate": "--generate", "PromptTokens": "--prompt-tokens", "EncoderTokens": "--encoder-tokens", "EncoderPath": "--encoder",
		"IntraOpThreads": "--threads", "InterOpThreads": "--inter-threads",
		"Session.OptLevel": "--opt-level", "Session.ExecutionMode": "--execution-mode",
		"Session.SaveOptimized": "--save-optimized", "Session.Config": "--session-config",
		"Session.Providers": "--provider", "Session.ProviderOptions": "--provider-option",
		"Shapes": "--shape", "Values": "--value",
		"Tune": "--tune", "Tune.Rounds": "--tune-rounds", "Tune.Threads": "--tune-threads",
		"Tune.OptLevels": "--tune-opt-levels", "Tune.ExecutionModes": "--tune-execution-modes",
		"ProfileRuns": "--profile-runs",
		"AB":          "--ab", "AB.Threshold": "--ab-threshold", "AB.MaxTime": "--duration",
		"AB.Looks": "", "AB.BlockRuns": "", "AB.Confidence": "", // no flag: the defaults
	},
	"history": {
		"Metric": "--metric", "Recent": "--recent",
		"Detection.PValue": "--p-value", "Detection.MinChange": "--min-change", "Detection.MinRuns": "--min-runs",
		"Detection.Confidence": "", // no flag: ortel uses the default
		"PromQuery.URL":        "--url", "PromQuery.Quantile": "--quantile", "PromQuery.Step": "--step",
		"PromQuery.Labels": "--label", "PromQuery.Range": "--range",
	},
	"attach": {
		"PIDs": "--pid PID", "Library": "--lib PATH",
		// ortel agent --attach
		"SpanRatio": "--attach-span-ratio", "Duty": "--attach-duty",
		"Limits.ProcessProbes": "--attach-max-process-probes", "Limits.NodeProbes": "--attach-max-probes",
		"Limits.ProcessEvents": "--attach-max-process-runs", "Limits.NodeEvents": "--attach-max-runs",
	},
	"analysis": {
		"PeakFLOPs": "--peak-flops", "PeakBandwidth": "--peak-bw", "GridIntensity": "--grid-intensity",
	},
	"hardware": {
		"PIDs":    "--pid PID",
		"GPUWait": "", // no flag: each command sets its own
	},
	"live view": { // set from bench's Config, which names its own flags first
		"Interval": "", "Window": "", "SLAPercentile": "", "ProfileRuns": "", "ProfileMaxRuns": "",
	},
	"import": { // no flags: ortel import uses the defaults
		"BatchSize": "", "MaxPending": "",
	},
}

// flagOf is the flag that sets engine's field, or "" when no flag does
// (the field's own name is then printed).
func flagOf(engine, field string) string { return engineFlags[engine][field] }

// flagWords is err's message with the fields its engine errors name
// replaced by their flags.
func flagWords(err error) string { return configerr.RenderAll(err, flagOf) }
