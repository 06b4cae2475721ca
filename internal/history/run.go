package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

// Run is one recorded bench run: what ran, where, how it was set up, and
// what it measured.
type Run struct {
	// ID is the store's number of the run (0 before it is recorded).
	ID int64 `json:"id"`
	// Time is when the run started.
	Time time.Time `json:"time"`
	// Model is the model's name; ModelSHA256 identifies its file.
	Model       string `json:"model"`
	ModelSHA256 string `json:"model_sha256"`
	// Workload is what each measured request did: the load scenario, batch
	// and input shapes. Runs of one model, workload and machine form a
	// series.
	Workload string `json:"workload"`
	// Machine is the kind of machine: architecture, CPU model and logical
	// CPUs. Host is the machine itself (its host name).
	Machine string `json:"machine"`
	Host    string `json:"host"`
	// Commit is the source revision the run measured, when given.
	Commit string `json:"commit,omitempty"`
	// Tool is the ortel version that ran the bench.
	Tool string `json:"tool"`
	// Source says how the run got into the history: "bench" or the
	// imported file.
	Source string `json:"source"`
	// Settings are what the run was set up with (ONNX Runtime version,
	// providers, session options, threads, model file).
	Settings []analysis.Setting `json:"settings"`
	// Metrics are the run's numbers, by name (see Metrics).
	Metrics map[string]Value `json:"metrics"`
	// OpTypes is the self time of each (op type, provider) per profiled
	// run; empty when the run profiled no operators.
	OpTypes []OpTime `json:"op_types,omitempty"`
	// Fingerprint identifies the report the run came from: recording the
	// same report twice keeps one run.
	Fingerprint string `json:"fingerprint"`
}

// Value is one measured number with its confidence interval, when the run
// has one.
type Value struct {
	V     float64  `json:"value"`
	Lower *float64 `json:"lower,omitempty"`
	Upper *float64 `json:"upper,omitempty"`
}

// OpTime is one (op type, provider)'s self time per profiled run.
type OpTime struct {
	OpType   string  `json:"op_type"`
	Provider string  `json:"provider"`
	SelfS    float64 `json:"self_s"`
	Calls    int     `json:"calls"`
}

// Metric describes one number a run records.
type Metric struct {
	Name string `json:"name"`
	// Unit: "s", "1/s", "By" or "J".
	Unit string `json:"unit"`
	// HigherIsBetter: throughput; everything else is better lower.
	HigherIsBetter bool   `json:"higher_is_better"`
	Description    string `json:"description"`
}

// Metrics lists the numbers a run can record. A run records those it
// measured: energy only where an energy source was readable, the arena
// peak only on ONNX Runtime 1.25+ with operator profiling.
var Metrics = []Metric{
	{"p50", "s", false, "median latency"},
	{"p90", "s", false, "90th percentile latency"},
	{"p95", "s", false, "95th percentile latency"},
	{"p99", "s", false, "99th percentile latency"},
	{"p99.9", "s", false, "99.9th percentile latency"},
	{"mean", "s", false, "mean latency"},
	{"throughput", "1/s", true, "items per second"},
	{"session_creation", "s", false, "session creation (model load and optimization)"},
	{"first_run", "s", false, "the first, cold run"},
	{"arena_peak", "By", false, "most the memory arena held while profiling"},
	{"peak_rss", "By", false, "peak resident memory of the process"},
	{"energy", "J", false, "energy per inference"},
}

// MetricByName returns the metric called name.
func MetricByName(name string) (Metric, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MetricNames lists the metric names, for messages.
func MetricNames() string {
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// FromReport turns a bench report into a run. commit is the source revision
// the run measured ("" when unknown) and source how it arrived ("bench" or
// the imported file's name).
func FromReport(r *report.Report, commit, source string) (Run, error) {
	if r.SchemaVersion != report.SchemaVersion {
		return Run{}, fmt.Errorf("report schema %q: the history reads %s", r.SchemaVersion, report.SchemaVersion)
	}
	if r.Model.Name == "" {
		return Run{}, fmt.Errorf("report has no model name")
	}
	if r.Latency.Count == 0 {
		return Run{}, fmt.Errorf("report of %s has no measured runs", r.Model.Name)
	}
	fp, err := fingerprint(r)
	if err != nil {
		return Run{}, err
	}
	run := Run{
		Time: r.CreatedAt.UTC(), Model: r.Model.Name, ModelSHA256: r.Model.SHA256,
		Workload: workload(r), Machine: machine(r.Host), Host: r.Host.Hostname,
		Commit: strings.TrimSpace(commit), Tool: r.Tool.Version, Source: source,
		Settings: analysis.Settings(r), Metrics: metricsOf(r), OpTypes: opTimes(r.Operators),
		Fingerprint: fp,
	}
	return run, nil
}

// CommitEnv are the environment variables CommitFromEnv reads, in order:
// ortel's own, then those of GitHub Actions, GitLab CI, Buildkite and
// Jenkins.
var CommitEnv = []string{"ORTEL_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "GIT_COMMIT"}

// CommitFromEnv returns the source revision a CI job measures, from the
// first of CommitEnv that getenv finds set; "" when none is.
func CommitFromEnv(getenv func(string) string) string {
	for _, k := range CommitEnv {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
	}
	return ""
}

// Series names the series the run belongs to: model, workload and machine.
func (r Run) Series() SeriesKey {
	return SeriesKey{Model: r.Model, Workload: r.Workload, Machine: r.Machine}
}

// Setting returns the value of the setting called name.
func (r Run) Setting(name string) string {
	for _, s := range r.Settings {
		if s.Name == name {
			return s.Value
		}
	}
	return ""
}

// fingerprint hashes the parts of a report that identify one run: when it
// started, where, on which model, and its latency samples.
func fingerprint(r *report.Report) (string, error) {
	b, err := json.Marshal(struct {
		T       time.Time
		H       report.Host
		M       string
		S       []float64
		Summary any
	}{r.CreatedAt.UTC(), r.Host, r.Model.SHA256 + r.Model.Name, r.Latency.Samples, r.Latency.Summary})
	if err != nil {
		return "", fmt.Errorf("fingerprint report: %w", err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16]), nil
}

func workload(r *report.Report) string {
	scen := "single-stream"
	var parts []string
	if r.Load != nil && r.Load.Scenario != "" {
		scen = r.Load.Scenario
		if r.Load.Concurrency > 1 {
			scen += " ×" + strconv.Itoa(r.Load.Concurrency)
		}
		if r.Load.TargetQPS > 0 {
			scen += " at " + strconv.FormatFloat(r.Load.TargetQPS, 'g', 4, 64) + "/s"
		}
	}
	if g := r.Generation; g != nil {
		scen = fmt.Sprintf("generate %d tokens after %d", g.OutputTokens, g.PromptTokens)
	}
	parts = append(parts, scen)
	if r.Config.Batch > 1 {
		parts = append(parts, "batch "+strconv.FormatInt(r.Config.Batch, 10))
	}
	for _, in := range r.Model.Inputs {
		dims := make([]string, len(in.Shape))
		for i, d := range in.Shape {
			dims[i] = strconv.FormatInt(d, 10)
		}
		parts = append(parts, in.Name+"="+strings.Join(dims, ","))
	}
	return strings.Join(parts, " ")
}

func machine(h report.Host) string {
	cpu := h.CPUModel
	if cpu == "" {
		cpu = "unknown CPU"
	}
	return fmt.Sprintf("%s/%s %s ×%d", h.OS, h.Arch, cpu, h.LogicalCPUs)
}

func metricsOf(r *report.Report) map[string]Value {
	m := map[string]Value{}
	put := func(name string, v float64) {
		if v > 0 && !math.IsInf(v, 0) {
			m[name] = Value{V: v}
		}
	}
	l := r.Latency.Summary
	for _, p := range []struct {
		name string
		q    float64
		v    float64
	}{{"p50", 50, l.P50}, {"p90", 90, l.P90}, {"p95", 95, l.P95}, {"p99", 99, l.P99}, {"p99.9", 99.9, l.P999}} {
		if !(p.v > 0) {
			continue
		}
		val := Value{V: p.v}
		if iv, ok := l.Interval(p.q); ok {
			val.Lower, val.Upper = iv.Lower, iv.Upper
		}
		m[p.name] = val
	}
	put("mean", l.Mean)
	put("throughput", r.Throughput.ItemsPerS)
	put("session_creation", r.Session.CreationS)
	put("first_run", r.Session.FirstRunS)
	if r.Operators != nil {
		put("arena_peak", float64(r.Operators.ArenaPeakBytes))
	}
	if h := r.Hardware; h != nil && h.Process != nil {
		put("peak_rss", float64(h.Process.PeakRSSBytes))
	}
	if a := r.Analysis; a != nil && a.Energy.Available {
		put("energy", a.Energy.JoulesPerInference)
	}
	return m
}

func opTimes(o *report.Operators) []OpTime {
	if o == nil || o.ProfiledRuns == 0 {
		return nil
	}
	out := make([]OpTime, 0, len(o.ByType))
	for _, t := range o.ByType {
		out = append(out, OpTime{OpType: t.OpType, Provider: t.Provider, SelfS: t.TotalS / float64(o.ProfiledRuns), Calls: t.Calls})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].OpType != out[j].OpType {
			return out[i].OpType < out[j].OpType
		}
		return out[i].Provider < out[j].Provider
	})
	return out
}
