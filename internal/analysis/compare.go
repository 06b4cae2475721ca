package analysis

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// Verdicts of a comparison.
const (
	VerdictFaster   = "faster"
	VerdictSlower   = "slower"
	VerdictNoChange = "no significant change"
)

// Defaults of CompareConfig.
const (
	DefaultResamples  = 2000
	DefaultConfidence = 0.95
	// DefaultMinEffect is the smallest latency change called faster or
	// slower: a shift below 1% is below what a benchmark on a shared
	// machine can vouch for, however many samples it has.
	DefaultMinEffect = 0.01
	// MinSamples is the fewest latency samples per side a comparison
	// accepts.
	MinSamples = 5
)

// CompareConfig says how to compare two runs. Zero fields take defaults.
type CompareConfig struct {
	// Percentile is the statistic the verdict and the gate use: "p50"
	// (default), "p90", "p95", "p99", "p99.9" or "mean".
	Percentile string
	// Threshold is the regression gate: a slower verdict whose change is
	// at least Threshold (0.05 for 5%) is a regression. 0: no gate.
	Threshold float64
	// MinEffect is the smallest change called faster or slower (default
	// DefaultMinEffect).
	MinEffect float64
	// Resamples and Confidence of the bootstrap (defaults 2000 and 0.95).
	Resamples  int
	Confidence float64
	// Seed of the bootstrap's generator (default 1): the same runs give
	// the same intervals.
	Seed uint64
	// AllowDisturbed judges the difference even when a side's measurement
	// verdict is disturbed (report.Measurement); by default no change is
	// then called significant and the gate is undecided.
	AllowDisturbed bool
}

// Comparison is B measured against A.
type Comparison struct {
	A          RunInfo `json:"a"`
	B          RunInfo `json:"b"`
	Percentile string  `json:"percentile"`
	Confidence float64 `json:"confidence"`
	Resamples  int     `json:"resamples"`
	MinEffect  float64 `json:"min_effect"`
	// Latency holds one row per statistic; Change is B/A - 1, so +0.10 is
	// 10% slower.
	Latency    []LatencyDelta `json:"latency"`
	Throughput Delta          `json:"throughput_items_per_s"`
	// Energy is joules per inference; nil unless both runs measured it.
	Energy  *Delta        `json:"energy_joules_per_inference,omitempty"`
	OpTypes []OpTypeDelta `json:"op_types,omitempty"`
	// Placement compares nodes per execution provider, CPU fallback and
	// memory copies; nil unless both runs were profiled.
	Placement *PlacementDelta `json:"placement,omitempty"`
	// Verdict is faster, slower or no significant change, on Percentile.
	Verdict string `json:"verdict"`
	// Regression is set when a gate (Threshold) was given.
	Regression *Regression `json:"regression,omitempty"`
	// SLA compares the runs' SLA verdicts; nil unless both checked one.
	SLA      *SLAComparison `json:"sla,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
	// NotJudged says why no change was called significant although the
	// intervals might exclude 0: a side's measurement was disturbed and
	// CompareConfig.AllowDisturbed was not set. Empty otherwise.
	NotJudged string `json:"not_judged,omitempty"`
	// suppressed: NotJudged turned a significant change into none.
	suppressed bool
}

// RunInfo identifies one side of a comparison.
type RunInfo struct {
	Label     string `json:"label"`
	Model     string `json:"model"`
	SHA256    string `json:"sha256"`
	CreatedAt string `json:"created_at"`
	Samples   int    `json:"samples"`
	// Measurement is the run's measurement verdict line ("stable",
	// "disturbed: ..."), when it was watched.
	Measurement string `json:"measurement,omitempty"`
}

// LatencyDelta compares one latency statistic.
type LatencyDelta struct {
	Stat   string  `json:"stat"`
	AS     float64 `json:"a_s"`
	BS     float64 `json:"b_s"`
	Change float64 `json:"change"`
	// CILow and CIHigh bound Change at the comparison's confidence.
	CILow  float64 `json:"ci_low"`
	CIHigh float64 `json:"ci_high"`
	// Significant: the interval excludes 0, and both runs support the
	// statistic.
	Significant bool `json:"significant"`
	// InsufficientRuns: one run has too few samples for a distribution-free
	// interval of this percentile at the comparison's confidence (see
	// stats.QuantileInterval); its change is shown but never significant.
	InsufficientRuns bool `json:"insufficient_runs,omitempty"`
	// AInterval and BInterval are each run's distribution-free
	// order-statistic interval of this percentile at the comparison's
	// confidence (stats.QuantileInterval); absent for the mean.
	AInterval *stats.Interval `json:"a_interval,omitempty"`
	BInterval *stats.Interval `json:"b_interval,omitempty"`
}

// Delta compares one number.
type Delta struct {
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	Change float64 `json:"change"`
}

// OpTypeDelta compares an op type's time per profiled run.
type OpTypeDelta struct {
	OpType   string  `json:"op_type"`
	Provider string  `json:"provider"`
	AS       float64 `json:"a_s"`
	BS       float64 `json:"b_s"`
	DeltaS   float64 `json:"delta_s"`
	// Change is B/A - 1; absent when the op type ran in one side only.
	Change *float64 `json:"change,omitempty"`
}

// Regression is the outcome of the gate.
type Regression struct {
	Threshold float64 `json:"threshold"`
	Exceeded  bool    `json:"exceeded"`
	// Undecided: the runs cannot support the gate's percentile
	// (insufficient runs), so the gate neither passes nor fails on it.
	Undecided bool   `json:"undecided,omitempty"`
	Reason    string `json:"reason"`
}

var compareStats = []Stat{Mean, {"p50", 0.50}, {"p90", 0.90}, {"p95", 0.95}, {"p99", 0.99}, {"p99.9", 0.999}}

// ParsePercentile checks a --percentile value: p50, p90, p95, p99, p99.9
// or mean (case-insensitive; "50" and "99" work too).
func ParsePercentile(s string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t != "mean" && !strings.HasPrefix(t, "p") {
		t = "p" + t
	}
	for _, st := range compareStats {
		if st.Name == t {
			return t, nil
		}
	}
	return "", fmt.Errorf("percentile %q: want one of p50, p90, p95, p99, p99.9, mean", s)
}

// ParseThreshold parses a --fail-on-regression value: "5%", "5" (percent)
// or "0.05".
func ParseThreshold(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a regression threshold (like 5%% or 0.05)", s)
	}
	if pct || v >= 1 {
		v /= 100
	}
	if v <= 0 || v >= 10 {
		return 0, fmt.Errorf("regression threshold %q must be above 0%%", s)
	}
	return v, nil
}

// Compare measures run b against run a: latency changes per statistic with
// bootstrap confidence intervals from the raw samples (samples_s),
// throughput and energy changes, per-op-type time changes, a verdict, and
// the regression gate. The labels name the runs (their file names).
func Compare(a, b *report.Report, labelA, labelB string, cfg CompareConfig) (*Comparison, error) {
	if cfg.Percentile == "" {
		cfg.Percentile = "p50"
	}
	pName, err := ParsePercentile(cfg.Percentile)
	if err != nil {
		return nil, err
	}
	if cfg.Resamples <= 0 {
		cfg.Resamples = DefaultResamples
	}
	if cfg.Confidence <= 0 || cfg.Confidence >= 1 {
		cfg.Confidence = DefaultConfidence
	}
	if cfg.MinEffect <= 0 {
		cfg.MinEffect = DefaultMinEffect
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if err := comparable(a, b, labelA, labelB); err != nil {
		return nil, err
	}
	c := &Comparison{
		A: runInfo(a, labelA), B: runInfo(b, labelB),
		Percentile: pName, Confidence: cfg.Confidence, Resamples: cfg.Resamples, MinEffect: cfg.MinEffect,
	}
	for _, side := range []struct {
		r     *report.Report
		label string
	}{{a, labelA}, {b, labelB}} {
		if n := len(side.r.Latency.Samples); n < MinSamples {
			return nil, fmt.Errorf("report %q has %d latency samples (samples_s); comparing needs at least %d per run", side.label, n, MinSamples)
		}
		for _, x := range side.r.Latency.Samples {
			if !(x > 0) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("report %q: latency sample %v is not a positive duration", side.label, x)
			}
		}
	}
	c.Warnings = append(compareWarnings(a, b), tuneWarnings(a, b)...)

	ba := NewBootstrap(a.Latency.Samples, cfg.Seed)
	bb := NewBootstrap(b.Latency.Samples, cfg.Seed+1)
	point, lo, hi := RatioCI(ba, bb, compareStats, cfg.Resamples, cfg.Confidence)
	var gate *LatencyDelta
	for i, st := range compareStats {
		d := LatencyDelta{Stat: st.Name, AS: ba.Value(st), BS: bb.Value(st), Change: point[i], CILow: lo[i], CIHigh: hi[i]}
		d.Significant = lo[i] > 0 || hi[i] < 0
		if st.Q > 0 && st.Q < 1 {
			need := stats.MinSamples(st.Q, cfg.Confidence)
			if min(len(a.Latency.Samples), len(b.Latency.Samples)) < need {
				d.InsufficientRuns, d.Significant = true, false
			}
		}
		c.Latency = append(c.Latency, d)
	}
	addIntervals(c, a.Latency.Samples, b.Latency.Samples)
	if !cfg.AllowDisturbed {
		if c.NotJudged = notJudged(a, b, labelA, labelB); c.NotJudged != "" {
			for i := range c.Latency {
				c.suppressed = c.suppressed || c.Latency[i].Significant
				c.Latency[i].Significant = false
			}
			c.Warnings = append([]string{"not judged: " + c.NotJudged}, c.Warnings...)
		}
	}
	c.SLA = compareSLA(a, b)
	for i := range c.Latency {
		if c.Latency[i].Stat == pName {
			gate = &c.Latency[i]
		}
	}
	switch {
	case gate.Significant && gate.Change >= cfg.MinEffect:
		c.Verdict = VerdictSlower
	case gate.Significant && gate.Change <= -cfg.MinEffect:
		c.Verdict = VerdictFaster
	default:
		c.Verdict = VerdictNoChange
	}
	if q := quantileOf(pName); q > 0 {
		n := min(len(a.Latency.Samples), len(b.Latency.Samples))
		switch {
		case gate.InsufficientRuns:
			c.Warnings = append(c.Warnings, fmt.Sprintf("insufficient runs: %d samples cannot bound %s at %.0f%% confidence (it needs %d per run); its change is never called significant: measure more runs (--runs auto) or gate on p50",
				n, pName, 100*cfg.Confidence, stats.MinSamples(q, cfg.Confidence)))
		case float64(n)*(1-q) < 5:
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s rests on fewer than 5 samples above it per run (%d samples): its interval is wide; measure more runs or gate on p50", pName, n))
		}
	}

	c.Throughput = delta(a.Throughput.ItemsPerS, b.Throughput.ItemsPerS)
	if ea, eb := energyOf(a), energyOf(b); ea > 0 && eb > 0 {
		d := delta(ea, eb)
		c.Energy = &d
	}
	c.OpTypes = opTypeDeltas(a.Operators, b.Operators)
	c.Placement = comparePlacement(a, b)

	if cfg.Threshold > 0 {
		r := &Regression{Threshold: cfg.Threshold}
		ci := fmt.Sprintf("%s %s (%s CI %s to %s)", pName, units.Change(gate.Change), units.Percent(cfg.Confidence, 0), units.Change(gate.CILow), units.Change(gate.CIHigh))
		switch {
		case c.NotJudged != "":
			r.Undecided = true
			r.Reason = fmt.Sprintf("undecided: a side's measurement was disturbed; %s", ci)
		case c.Verdict == VerdictSlower && gate.Change >= cfg.Threshold:
			r.Exceeded = true
			r.Reason = fmt.Sprintf("regression: %s exceeds the %.1f%% threshold", ci, 100*cfg.Threshold)
		case c.SLA != nil && c.SLA.Regressed:
			r.Exceeded = true
			r.Reason = fmt.Sprintf("regression: A met the SLA %s and B misses it (early-stopping verdicts at %.0f%% confidence); latency %s",
				slaName(c.SLA.A), 100*slaConfidence(c.SLA), ci)
		case gate.InsufficientRuns:
			r.Undecided = true
			r.Reason = fmt.Sprintf("undecided: insufficient runs for %s (%d needed per run, at %.0f%% confidence); %s", pName,
				stats.MinSamples(quantileOf(pName), cfg.Confidence), 100*cfg.Confidence, ci)
		case c.Verdict == VerdictSlower:
			r.Reason = fmt.Sprintf("slower but within the %.1f%% threshold: %s", 100*cfg.Threshold, ci)
		default:
			r.Reason = fmt.Sprintf("no regression: %s", ci)
		}
		c.Regression = r
	}
	return c, nil
}

func quantileOf(name string) float64 {
	for _, st := range compareStats {
		if st.Name == name {
			return st.Q
		}
	}
	return -1
}

func runInfo(r *report.Report, label string) RunInfo {
	return RunInfo{Label: label, Model: r.Model.Name, SHA256: r.Model.SHA256, CreatedAt: r.CreatedAt.Format("2006-01-02 15:04:05 MST"), Samples: len(r.Latency.Samples),
		Measurement: r.Measurement.Line()}
}

// notJudged says which sides were disturbed, or "" when neither was.
func notJudged(a, b *report.Report, labelA, labelB string) string {
	var sides []string
	for _, s := range []struct {
		name, label string
		r           *report.Report
	}{{"A", labelA, a}, {"B", labelB, b}} {
		if s.r.Measurement.Disturbed() {
			sides = append(sides, fmt.Sprintf("%s (%s) was %s", s.name, s.label, s.r.Measurement.Line()))
		}
	}
	if len(sides) == 0 {
		return ""
	}
	return strings.Join(sides, "; ") + ": its figures describe the disturbance as much as the model, so no difference is called significant (--allow-disturbed judges it anyway; ortel bench --ab measures both sides in one interleaved invocation)"
}

func delta(a, b float64) Delta {
	d := Delta{A: a, B: b}
	if a != 0 {
		d.Change = b/a - 1
	}
	return d
}

func energyOf(r *report.Report) float64 {
	if r.Analysis == nil || !r.Analysis.Energy.Available {
		return 0
	}
	return r.Analysis.Energy.JoulesPerInference
}

func opTypeDeltas(a, b *report.Operators) []OpTypeDelta {
	if a == nil || b == nil || a.ProfiledRuns == 0 || b.ProfiledRuns == 0 {
		return nil
	}
	per := func(o *report.Operators) map[[2]string]float64 {
		m := map[[2]string]float64{}
		for _, t := range o.ByType {
			m[[2]string{t.OpType, t.Provider}] += t.TotalS / float64(o.ProfiledRuns)
		}
		return m
	}
	ma, mb := per(a), per(b)
	keys := map[[2]string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var out []OpTypeDelta
	for k := range keys {
		d := OpTypeDelta{OpType: k[0], Provider: k[1], AS: ma[k], BS: mb[k], DeltaS: mb[k] - ma[k]}
		if ma[k] > 0 && mb[k] > 0 {
			d.Change = ptr(mb[k]/ma[k] - 1)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		if math.Abs(out[i].DeltaS) != math.Abs(out[j].DeltaS) {
			return math.Abs(out[i].DeltaS) > math.Abs(out[j].DeltaS)
		}
		return out[i].OpType < out[j].OpType
	})
	return out
}

func compareWarnings(a, b *report.Report) []string {
	var w []string
	sb := Settings(b)
	for i, sa := range Settings(a) {
		switch {
		case sa.Value == sb[i].Value:
		case sa.Name == SettingModelFile:
			w = append(w, "the runs used different model files (expected when comparing two versions of a model)")
		default:
			w = append(w, fmt.Sprintf("%s differs: %q vs %q", sa.Name, sa.Value, sb[i].Value))
		}
	}
	return w
}

func inputShapes(r *report.Report) string {
	var parts []string
	for _, in := range r.Model.Inputs {
		s := make([]string, len(in.Shape))
		for i, d := range in.Shape {
			s[i] = strconv.FormatInt(d, 10)
		}
		parts = append(parts, in.Name+"="+strings.Join(s, ","))
	}
	return strings.Join(parts, " ")
}

// sessionOpts returns a report's session options; a report written before
// they were recorded ran with ONNX Runtime's defaults.
func sessionOpts(r *report.Report) report.SessionOptions {
	if r.Config.Session != nil {
		return *r.Config.Session
	}
	return report.SessionOptions{OptLevel: "all", ExecutionMode: "sequential"}
}

func kvText(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, " ")
}

// ErrIncomparable is returned (wrapped) by Compare when the two reports'
// latencies measure different things.
var ErrIncomparable = errors.New("the two reports' latencies are not comparable")

// comparable refuses a comparison whose answer would be wrong: a report
// made from an ONNX Runtime profile holds the profiled runs' durations,
// slowed by the profiler (1.07x to 5x in ortel's measurements), so set
// against a bench's unprofiled runs it would show the profiler, not the
// change.
func comparable(a, b *report.Report, labelA, labelB string) error {
	if a.FromProfile() == b.FromProfile() {
		return nil
	}
	prof, bench := labelA, labelB
	if b.FromProfile() {
		prof, bench = labelB, labelA
	}
	return fmt.Errorf("%w: %q is made from an ONNX Runtime profile, whose latencies are profiled runs slowed by the profiler, and %q is an ortel bench run of unprofiled runs: the difference would be the profiler's, not your change. Compare two profiles (ortel report PROFILE.json --save DIR on each), or two bench runs",
		ErrIncomparable, prof, bench)
}
