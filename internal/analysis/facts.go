package analysis

import (
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// Facts are what the rules look at: the numbers of one run, taken from its
// report (latency, operator profile, hardware and load sections) and its
// roofline. Pointer fields are nil when the run did not measure them, and a
// rule that needs them then stays silent.
type Facts struct {
	// RequestedProviders are the execution providers the session asked
	// for, in priority order.
	RequestedProviders []string
	// Batch is the batch size in use.
	Batch int64
	// LogicalCPUs of the host.
	LogicalCPUs int
	// IntraOpThreads is the configured intra-op thread count (0: ORT's
	// default).
	IntraOpThreads int

	// Latency of the measured runs, in seconds.
	Latency stats.Summary
	// SessionCreationS and FirstRunS are the cold-start numbers.
	SessionCreationS, FirstRunS float64
	// RunsToStable is how many runs the latency took to settle, from a
	// warm-up scenario; nil when none ran.
	RunsToStable *int
	// WarmupExcessS is the time the warm-up runs took beyond steady state,
	// from a warm-up scenario; nil when none ran.
	WarmupExcessS *float64

	// Timeline is the operators of one profiled run.
	Timeline []report.NodeTiming
	// OpTypes are the operators' self times over all profiled runs, per
	// (op type, provider): the top-operators table, whose shares are the
	// one share definition every table and finding uses. Empty for a
	// hand-made report; the rules then use the timeline run's shares.
	OpTypes []report.OpType
	// ProfiledRuns is how many runs OpTypes sums.
	ProfiledRuns int
	// InputNames are the model's input names (past_key_values.* marks a
	// decoder with a key/value cache).
	InputNames []string
	// Roofline of that run (nil without operator profiling) and the peaks.
	Roofline *report.Roofline
	Peaks    *report.Peaks

	// Outliers is the number of outlying runs a jitter analysis found;
	// nil when none ran.
	Outliers *int

	// Batches are the results of a batch-size sweep; empty when none ran.
	Batches []BatchPoint
	// BestBatch is the sweep's choice (highest items/s among the sizes
	// meeting the SLA, when one was given); 0 lets the rule choose the
	// highest items/s.
	BestBatch int64

	// CPUUtilization is the average host CPU utilization (0..1) during
	// the measured phase.
	CPUUtilization *float64
	// GPUUtilization is the average utilization (0..1) of the busiest GPU
	// during the measured phase.
	GPUUtilization *float64
	// Throttle lists active throttling (e.g. "gpu0: thermal") seen during
	// the measured phase.
	Throttle []string
	// TemperatureMarginC is the smallest distance, in °C, between a
	// temperature reading and its limit during the measured phase.
	TemperatureMarginC *float64
	// CPUFrequencyDrop is 1 - (lowest average CPU frequency / highest
	// frequency seen), during the measured phase.
	CPUFrequencyDrop *float64
}

// BatchPoint is one batch size of a sweep.
type BatchPoint struct {
	Batch     int64
	ItemsPerS float64
	P50S      float64
	P99S      float64
}

// FactsFrom takes the facts from a report and its roofline and peaks.
func FactsFrom(rep *report.Report, roof *report.Roofline, peaks *report.Peaks) *Facts {
	f := &Facts{
		RequestedProviders: rep.Runtime.Providers,
		Batch:              rep.Config.Batch,
		LogicalCPUs:        rep.Host.LogicalCPUs,
		IntraOpThreads:     rep.Config.IntraOpThreads,
		Latency:            rep.Latency.Summary,
		SessionCreationS:   rep.Session.CreationS,
		FirstRunS:          rep.Session.FirstRunS,
		Roofline:           roof,
		Peaks:              peaks,
	}
	for _, in := range rep.Model.Inputs {
		f.InputNames = append(f.InputNames, in.Name)
	}
	if f.Batch <= 0 {
		f.Batch = 1
	}
	if rep.Operators != nil {
		f.Timeline = rep.Operators.Timeline
		f.OpTypes = rep.Operators.ByType
		f.ProfiledRuns = rep.Operators.ProfiledRuns
	}
	loadFacts(f, rep)
	hardwareFacts(f, rep.Hardware)
	return f
}
