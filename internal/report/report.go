// Package report defines ortel's run report: the JSON document `ortel bench`
// writes (report.json) and every other format is rendered from. The schema is
// versioned by SchemaVersion; fields are only ever added within a version.
// See docs/report-schema.md.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/ortel-dev/ortel/internal/atomicfile"
	"github.com/ortel-dev/ortel/internal/stats"
)

// SchemaVersion identifies the report layout.
const SchemaVersion = "ortel.report/v1"

// Report is one bench run.
type Report struct {
	SchemaVersion string    `json:"schema_version"`
	Tool          Tool      `json:"tool"`
	CreatedAt     time.Time `json:"created_at"`
	Host          Host      `json:"host"`
	Runtime       Runtime   `json:"runtime"`
	Model         Model     `json:"model"`
	Config        Config    `json:"config"`

	Session    Session    `json:"session"`
	Latency    Latency    `json:"latency"`
	Throughput Throughput `json:"throughput"`
	Operators  *Operators `json:"operators,omitempty"`

	// Sections added by load scenarios (load.go).
	Warmup     *Warmup     `json:"warmup,omitempty"`
	Jitter     *Jitter     `json:"jitter,omitempty"`
	Load       *Load       `json:"load,omitempty"`
	BatchSweep *BatchSweep `json:"batch_sweep,omitempty"`
	Generation *Generation `json:"generation,omitempty"`
	// Tune is the tuning sweep of bench --tune (tune.go).
	Tune *Tune `json:"tune,omitempty"`
	// AB is the interleaved A/B comparison of bench --ab (ab.go).
	AB *AB `json:"ab,omitempty"`
	// Hardware readings during the measured phase (hardware.go).
	Hardware *Hardware `json:"hardware,omitempty"`
	// Analysis: roofline, findings, energy efficiency (analysis.go).
	Analysis *Analysis `json:"analysis,omitempty"`

	// Source, when set, says the report was made from ONNX Runtime
	// profile files (ortel report PROFILE.json) rather than by ortel bench,
	// and where its numbers came from; absent in bench reports.
	Source *Source `json:"source,omitempty"`

	Telemetry Telemetry `json:"telemetry"`
	Notes     []string  `json:"notes,omitempty"`
	// Verdict is a one-line judgement of the measurement itself (was the
	// machine quiet enough to trust it), shown in the summary when set:
	// Measurement.Line() when the phase was watched.
	Verdict string `json:"verdict,omitempty"`
	// Measurement is the interference verdict on the main measured phase
	// (measurement.go).
	Measurement *Measurement `json:"measurement,omitempty"`
}

// SourceProfile is Source.Kind of a report made from ONNX Runtime profiles.
const SourceProfile = "onnxruntime_profile"

// Source says where a report's numbers came from when ortel did not
// measure them itself.
type Source struct {
	// Kind is SourceProfile.
	Kind string `json:"kind"`
	// Layout is "session" (a session-level profile:
	// SessionOptions.EnableProfiling in any language) or "run" (run-level
	// profiles, one file per run: ONNX Runtime 1.25 and later).
	Layout string `json:"layout"`
	// Files are the profiles read, in the order given.
	Files []ProfileFile `json:"files"`
	// Latency says what the latency samples are: the profiled runs'
	// durations, profiler overhead included.
	Latency string `json:"latency"`
	// ModelLoadS and InitializationS are the session's model_loading_uri
	// and session_initialization events (session-level profiles only);
	// Session.CreationS is their sum.
	ModelLoadS      float64 `json:"model_load_s,omitempty"`
	InitializationS float64 `json:"session_initialization_s,omitempty"`
	// Assumed lists what the report takes for granted that the profile
	// does not say (the machine it ran on, with --model).
	Assumed []string `json:"assumed,omitempty"`
}

// ProfileFile is one profile a report was made from.
type ProfileFile struct {
	Path string `json:"path"`
	// PID is the process that wrote the profile (its events' pid).
	PID int64 `json:"pid,omitempty"`
	// Start is the wall-clock time of the profile's clock zero, and
	// StartFrom where it was read (ORT's file name, the file's time).
	Start     time.Time `json:"start"`
	StartFrom string    `json:"start_from"`
	// Runs is how many profiled runs the file holds.
	Runs int `json:"runs"`
	// OperatorsOutside counts operator events that lay in no run (a cut
	// profile): they are not in the report.
	OperatorsOutside int `json:"operators_outside,omitempty"`
	// Repairs and Rejected count the reader's repairs (a cut file, say)
	// and the events skipped for impossible times.
	Repairs  int `json:"repairs,omitempty"`
	Rejected int `json:"rejected,omitempty"`
}

// FromProfile reports whether r was made from ONNX Runtime profiles.
func (r *Report) FromProfile() bool { return r.Source != nil && r.Source.Kind == SourceProfile }

// Tool names the program that wrote the report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Host describes the machine.
type Host struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUModel    string `json:"cpu_model,omitempty"`
	LogicalCPUs int    `json:"logical_cpus"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
}

// Runtime describes ONNX Runtime.
type Runtime struct {
	ORTVersion  string   `json:"ort_version"`
	LibraryPath string   `json:"library_path"`
	Providers   []string `json:"execution_providers"`
	// Holds says whose runtime this is when the report measured more than
	// one library (an A/B comparison of two ONNX Runtime releases: side
	// A's); "" when it is the only one.
	Holds string `json:"holds,omitempty"`
}

// Tensor is a model input or output.
type Tensor struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Declared []int64 `json:"declared_shape"`
	Shape    []int64 `json:"shape,omitempty"`
	Value    *string `json:"value,omitempty"`
}

// Model describes the model file.
type Model struct {
	Name string `json:"name"`
	// Catalog is the name the model was given by when it was one of
	// ortel's known models (paddleocr-det), for commands to repeat it.
	Catalog   string   `json:"catalog,omitempty"`
	Path      string   `json:"path"`
	SizeBytes int64    `json:"size_bytes"`
	SHA256    string   `json:"sha256"`
	Producer  string   `json:"producer,omitempty"`
	Graph     string   `json:"graph,omitempty"`
	Inputs    []Tensor `json:"inputs"`
	Outputs   []Tensor `json:"outputs"`
}

// Config is what the bench was asked to do.
type Config struct {
	Runs           int     `json:"runs"`
	DurationS      float64 `json:"duration_s,omitempty"`
	Warmup         int     `json:"warmup"`
	IntraOpThreads int     `json:"intra_op_threads"`
	InterOpThreads int     `json:"inter_op_threads"`
	Batch          int64   `json:"batch"`
	ProfileRuns    int     `json:"profile_runs"`
	Seed           uint64  `json:"seed"`
	// AutoRuns, with --runs auto, records the stopping rule and why the
	// measured phase stopped.
	AutoRuns *AutoRuns `json:"auto_runs,omitempty"`
	// Session holds the ONNX Runtime session options the runs used.
	Session *SessionOptions `json:"session,omitempty"`
}

// SessionOptions are the ONNX Runtime session options of the measured
// sessions (bench's --opt-level, --execution-mode, --save-optimized,
// --session-config, --provider and --provider-option).
type SessionOptions struct {
	// OptLevel: disable, basic, extended or all (ONNX Runtime's default).
	OptLevel string `json:"opt_level"`
	// ExecutionMode: sequential (the default) or parallel.
	ExecutionMode string `json:"execution_mode"`
	// SaveOptimized is where the optimized model was written.
	SaveOptimized string `json:"save_optimized,omitempty"`
	// Config holds the session configuration entries set.
	Config map[string]string `json:"config,omitempty"`
	// Providers asked for, in order (the CPU provider is always the
	// fallback); absent: CPU only.
	Providers       []string          `json:"providers,omitempty"`
	ProviderOptions map[string]string `json:"provider_options,omitempty"`
}

// AutoRuns records an automatic run count (--runs auto): the measured phase
// ran until the confidence interval of Percentile was at most TargetWidth
// of its estimate, or LimitS passed, or MaxRuns requests ran.
type AutoRuns struct {
	Percentile  float64 `json:"percentile"`
	TargetWidth float64 `json:"target_width"`
	LimitS      float64 `json:"limit_s"`
	MaxRuns     int     `json:"max_runs"`
	Confidence  float64 `json:"confidence"`
	// Runs is how many successful runs the rule saw at the end.
	Runs int `json:"runs"`
	// Width is the final interval width relative to the estimate; absent
	// when the runs could not bound the percentile on both sides.
	Width *float64 `json:"width,omitempty"`
	// StoppedBy is "width" (the rule held), "time limit" or "max runs".
	StoppedBy string `json:"stopped_by"`
}

// Session holds the cold-start numbers.
type Session struct {
	CreationS float64 `json:"creation_s"`
	FirstRunS float64 `json:"first_run_s"`
}

// Latency is the steady-state latency of the measured runs, in seconds.
// Samples keeps every measured latency in run order, so later analysis
// (comparisons, bootstrap confidence intervals) works from the raw data.
type Latency struct {
	stats.Summary
	Samples []float64 `json:"samples_s"`
	Errors  int       `json:"errors"`
}

// Throughput of the measured phase.
type Throughput struct {
	RunsPerS  float64 `json:"runs_per_s"`
	ItemsPerS float64 `json:"items_per_s"`
	WallS     float64 `json:"wall_s"`
}

// Operators summarizes the separate operator-profiling pass.
type Operators struct {
	ProfiledRuns    int            `json:"profiled_runs"`
	Nodes           int            `json:"nodes_per_run"`
	NodesByProvider map[string]int `json:"nodes_by_provider"`
	TotalS          float64        `json:"total_s"`
	ByType          []OpType       `json:"by_op_type"`
	// ArenaPeakBytes is the most the session's memory arena held during
	// the profiled runs (ONNX Runtime 1.25+; absent before).
	ArenaPeakBytes int64 `json:"arena_peak_bytes,omitempty"`
	// ArenaGrowth lists the nodes that grew the arena over the profiled
	// runs, largest growth first (at most 10; ONNX Runtime 1.25+).
	ArenaGrowth []ArenaGrowth `json:"arena_growth,omitempty"`
	// Timeline is every operator of one profiled run (the last), in order,
	// with offsets from the run's start: the data of a Gantt chart.
	Timeline []NodeTiming `json:"timeline,omitempty"`
	// RunSpans are the profiled runs' spans, oldest first, to find their
	// traces in a tracing backend.
	RunSpans []SpanRef `json:"run_spans,omitempty"`
}

// ArenaGrowth is how much one node grew the session's memory arena.
type ArenaGrowth struct {
	Name   string `json:"name"`
	OpType string `json:"op_type"`
	Bytes  int64  `json:"bytes"`
}

// SpanRef identifies a span: W3C hex ids.
type SpanRef struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id"`
}

// OpType aggregates one (op type, provider) pair over the profiled runs.
type OpType struct {
	OpType   string  `json:"op_type"`
	Provider string  `json:"provider"`
	Calls    int     `json:"calls"`
	TotalS   float64 `json:"total_s"`
	Share    float64 `json:"share"`
	MeanS    float64 `json:"mean_s"`
}

// NodeTiming is one operator of one run.
type NodeTiming struct {
	Name           string   `json:"name"`
	OpType         string   `json:"op_type"`
	Provider       string   `json:"provider"`
	StartS         float64  `json:"start_s"`
	DurS           float64  `json:"dur_s"`
	InputShapes    []string `json:"input_shapes,omitempty"`
	OutputShapes   []string `json:"output_shapes,omitempty"`
	ActivationSize int64    `json:"activation_bytes"`
	ParameterSize  int64    `json:"parameter_bytes"`
	OutputSize     int64    `json:"output_bytes"`
	Threads        int      `json:"threads,omitempty"`
	Imbalance      float64  `json:"thread_imbalance,omitempty"`
	// SubgraphS is the part of DurS spent in the nodes of the subgraphs
	// this node ran (If, Loop, Scan), which are in the timeline too; 0 for
	// other nodes.
	SubgraphS float64 `json:"subgraph_s,omitempty"`
	// Depth is 0 in the main graph, 1 inside a subgraph, and so on.
	Depth int `json:"depth,omitempty"`
	// ArenaHeldDelta and ArenaHeld are the node's growth of the session's
	// memory arena and what the arena held after it (ONNX Runtime 1.25+;
	// absent before).
	ArenaHeldDelta int64 `json:"arena_held_delta_bytes,omitempty"`
	ArenaHeld      int64 `json:"arena_held_bytes,omitempty"`
}

// SelfS is the node's own time: DurS less the time of the subgraph nodes it
// ran. Statistics sum SelfS, so that no time is counted twice.
func (n NodeTiming) SelfS() float64 { return max(n.DurS-n.SubgraphS, 0) }

// Telemetry says where the spans and metrics went.
type Telemetry struct {
	Mode          string   `json:"mode"`
	Endpoint      string   `json:"endpoint,omitempty"`
	Files         []string `json:"files,omitempty"`
	SpansExported int64    `json:"spans_exported"`
	SpansDropped  int64    `json:"spans_dropped"`
	// SpansSpooled and MetricExportsSpooled could not be sent and went to
	// SpoolDir, for `ortel replay`; MetricExportsFailed counts the metric
	// exports that failed (spooled ones included).
	SpansSpooled         int64  `json:"spans_spooled,omitempty"`
	MetricExportsFailed  int64  `json:"metric_exports_failed,omitempty"`
	MetricExportsSpooled int64  `json:"metric_exports_spooled,omitempty"`
	SpoolDir             string `json:"spool_dir,omitempty"`
}

// Write writes r as indented JSON to path, replacing the file whole: a
// full disk or a crash leaves the old file (or none), never a part of the
// report or an empty file.
func (r *Report) Write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report %q: %w", path, err)
	}
	return nil
}

// Read reads a report written by Write, checking its schema version.
func Read(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read report %q: %w", path, err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read report %q: not a valid report JSON: %w", path, err)
	}
	if r.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("read report %q: schema_version is %q, this ortel reads %q", path, r.SchemaVersion, SchemaVersion)
	}
	return &r, nil
}
