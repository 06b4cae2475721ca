package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/configerr"
)

// Config says which series to analyse and how.
type Config struct {
	// Model selects one model's series; "" selects every model.
	Model string
	// Metric is the number whose change points are found (default "p50";
	// see Metrics).
	Metric string
	// Since drops the runs that started before it; zero keeps all.
	Since time.Time
	// Detection tunes the change-point detection.
	Detection Detection
	// Recent is how many runs may follow a change point for Check to still
	// report it (default DefaultRecent): after that the new level is the
	// series' normal, and the gate passes again.
	Recent int
}

// DefaultRecent is Config.Recent's default.
const DefaultRecent = 10

// Validate reports what is wrong with c, in the history's words: a
// *configerr.Error naming the fields ({Metric}, {Detection.PValue}, ...).
func (c Config) Validate() error {
	if c.Metric != "" {
		if _, ok := MetricByName(c.Metric); !ok {
			return configerr.New("history", "{Metric} %q: want one of %s", c.Metric, MetricNames())
		}
	}
	if c.Recent < 0 {
		return configerr.New("history", "{Recent} %d: want 1 or more, or 0 for the default (%d)", c.Recent, DefaultRecent)
	}
	return c.Detection.validate()
}

func (c Config) withDefaults() Config {
	if c.Metric == "" {
		c.Metric = "p50"
	}
	if c.Recent == 0 {
		c.Recent = DefaultRecent
	}
	c.Detection = c.Detection.withDefaults()
	return c
}

// Series is one series' runs with their change points.
type Series struct {
	SeriesKey
	Metric Metric `json:"metric"`
	// Points are the runs that measured the metric, oldest first.
	Points []Point `json:"points"`
	// Changes are the change points, oldest first.
	Changes []Change `json:"changes"`
	runs    []Run
}

// Point is one run's value of the series' metric.
type Point struct {
	RunID  int64     `json:"run_id"`
	Time   time.Time `json:"time"`
	Commit string    `json:"commit,omitempty"`
	Value
	// Candidate marks a run checked against the history without being
	// recorded in it (ortel history check REPORT.json).
	Candidate bool `json:"candidate,omitempty"`
}

// Change is a change point with what changed with it.
type Change struct {
	ChangePoint
	// Worse: slower, or less throughput.
	Worse bool `json:"worse"`
	// Time and RunID are those of the first run after the change.
	Time  time.Time `json:"time"`
	RunID int64     `json:"run_id"`
	Attribution
}

// Analyze reads the runs cfg selects from s, appends candidates (runs to
// check without recording them) to their series, and finds each series'
// change points in cfg.Metric.
func Analyze(ctx context.Context, s *Store, cfg Config, candidates ...Run) ([]Series, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	runs, err := s.Runs(ctx, Filter{Model: cfg.Model, Since: cfg.Since})
	if err != nil {
		return nil, err
	}
	for _, c := range candidates {
		c.ID = -1 // not in the store
		if cfg.Model == "" || c.Model == cfg.Model {
			runs = append(runs, c)
		}
	}
	if len(runs) == 0 {
		if cfg.Model != "" {
			return nil, fmt.Errorf("history %s has no runs of model %q", s.Where(), cfg.Model)
		}
		return nil, fmt.Errorf("history %s has no runs", s.Where())
	}
	return AnalyzeRuns(runs, cfg)
}

// AnalyzeRuns groups runs into series and finds each one's change points.
func AnalyzeRuns(runs []Run, cfg Config) ([]Series, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	metric, _ := MetricByName(cfg.Metric)
	bySeries := map[SeriesKey][]Run{}
	var keys []SeriesKey
	for _, r := range runs {
		k := r.Series()
		if _, ok := bySeries[k]; !ok {
			keys = append(keys, k)
		}
		bySeries[k] = append(bySeries[k], r)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var out []Series
	var errs []error
	for _, k := range keys {
		rs := bySeries[k]
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Time.Before(rs[j].Time) })
		ser, err := analyzeSeries(k, metric, rs, cfg.Detection)
		if err != nil {
			errs = append(errs, fmt.Errorf("series %s: %w", k, err))
			continue
		}
		if len(ser.Points) > 0 {
			out = append(out, ser)
		}
	}
	return out, errors.Join(errs...)
}

func analyzeSeries(k SeriesKey, m Metric, runs []Run, d Detection) (Series, error) {
	ser := Series{SeriesKey: k, Metric: m}
	var values []float64
	for _, r := range runs {
		v, ok := r.Metrics[m.Name]
		if !ok || !(v.V > 0) || math.IsInf(v.V, 0) {
			continue
		}
		ser.Points = append(ser.Points, Point{RunID: r.ID, Time: r.Time, Commit: r.Commit, Value: v, Candidate: r.ID < 0})
		ser.runs = append(ser.runs, r)
		values = append(values, v.V)
	}
	cps, err := Detect(values, d)
	if err != nil {
		return ser, err
	}
	for _, cp := range cps {
		worse := cp.Change > 0
		if m.HigherIsBetter {
			worse = cp.Change < 0
		}
		first := ser.runs[cp.Index]
		ser.Changes = append(ser.Changes, Change{
			ChangePoint: cp, Worse: worse, Time: first.Time, RunID: first.ID,
			Attribution: attribute(ser.runs[cp.Index-cp.BeforeRuns:cp.Index], ser.runs[cp.Index:cp.Index+cp.AfterRuns]),
		})
	}
	return ser, nil
}

// Attribution is what differed between the runs on each side of a change
// point.
type Attribution struct {
	// Settings that differ: the value most runs before had, and the value
	// most runs after had.
	Settings []SettingChange `json:"settings,omitempty"`
	// CommitBefore is the last run's commit before the change, CommitAfter
	// the first run's after it: the change arrived in between.
	CommitBefore string `json:"commit_before,omitempty"`
	CommitAfter  string `json:"commit_after,omitempty"`
	// OpTypes are the op types whose self time per profiled run moved
	// most, largest move first (at most 5); empty without profiled runs on
	// both sides.
	OpTypes []OpTypeChange `json:"op_types,omitempty"`
}

// SettingChange is one setting that differed across a change point.
type SettingChange struct {
	Name   string `json:"name"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// OpTypeChange is one op type's median self time per profiled run on each
// side of a change point.
type OpTypeChange struct {
	OpType   string  `json:"op_type"`
	Provider string  `json:"provider"`
	BeforeS  float64 `json:"before_s"`
	AfterS   float64 `json:"after_s"`
	DeltaS   float64 `json:"delta_s"`
}

// runSettings are the settings a change can be attributed to: the report's
// (analysis.Settings), the host and the ortel version.
func runSettings(r Run) []analysis.Setting {
	return append(append([]analysis.Setting(nil), r.Settings...),
		analysis.Setting{Name: "host", Value: r.Host}, analysis.Setting{Name: "ortel version", Value: r.Tool})
}

func attribute(before, after []Run) Attribution {
	var a Attribution
	if len(before) == 0 || len(after) == 0 {
		return a
	}
	a.CommitBefore, a.CommitAfter = before[len(before)-1].Commit, after[0].Commit
	mb, ma := settingModes(before), settingModes(after)
	for _, s := range runSettings(after[0]) {
		if mb[s.Name] != ma[s.Name] {
			a.Settings = append(a.Settings, SettingChange{Name: s.Name, Before: mb[s.Name], After: ma[s.Name]})
		}
	}
	a.OpTypes = opTypeChanges(before, after)
	return a
}

// settingModes returns each setting's most common value among runs (the
// latest of equally common ones).
func settingModes(runs []Run) map[string]string {
	count := map[string]map[string]int{}
	modes := map[string]string{}
	for _, r := range runs {
		for _, s := range runSettings(r) {
			if count[s.Name] == nil {
				count[s.Name] = map[string]int{}
			}
			count[s.Name][s.Value]++
			if count[s.Name][s.Value] >= count[s.Name][modes[s.Name]] {
				modes[s.Name] = s.Value
			}
		}
	}
	return modes
}

func opTypeChanges(before, after []Run) []OpTypeChange {
	type key struct{ op, provider string }
	medians := func(runs []Run) map[key]float64 {
		per := map[key][]float64{}
		profiled := 0
		for _, r := range runs {
			if len(r.OpTypes) == 0 {
				continue
			}
			profiled++
			for _, o := range r.OpTypes {
				k := key{o.OpType, o.Provider}
				per[k] = append(per[k], o.SelfS)
			}
		}
		out := map[key]float64{}
		for k, xs := range per {
			for len(xs) < profiled { // absent from a profiled run: no time
				xs = append(xs, 0)
			}
			sort.Float64s(xs)
			out[k] = (xs[(len(xs)-1)/2] + xs[len(xs)/2]) / 2
		}
		return out
	}
	mb, ma := medians(before), medians(after)
	if len(mb) == 0 || len(ma) == 0 {
		return nil
	}
	keys := map[key]bool{}
	for k := range mb {
		keys[k] = true
	}
	for k := range ma {
		keys[k] = true
	}
	var out []OpTypeChange
	for k := range keys {
		out = append(out, OpTypeChange{OpType: k.op, Provider: k.provider, BeforeS: mb[k], AfterS: ma[k], DeltaS: ma[k] - mb[k]})
	}
	sort.Slice(out, func(i, j int) bool {
		if math.Abs(out[i].DeltaS) != math.Abs(out[j].DeltaS) {
			return math.Abs(out[i].DeltaS) > math.Abs(out[j].DeltaS)
		}
		return out[i].OpType+out[i].Provider < out[j].OpType+out[j].Provider
	})
	return out[:min(len(out), 5)]
}

// Verdict is the gate's judgement of one series' newest run.
type Verdict struct {
	Series SeriesKey `json:"series"`
	Metric string    `json:"metric"`
	// Status is "regression", "improvement" or "no change".
	Status string `json:"status"`
	// Change is the change point the newest run sits after, when Status is
	// not "no change"; RunsSince is how many runs follow it.
	Change    *Change `json:"change,omitempty"`
	RunsSince int     `json:"runs_since,omitempty"`
}

// Verdict statuses.
const (
	StatusRegression  = "regression"
	StatusImprovement = "improvement"
	StatusNoChange    = "no change"
)

// Check judges each series' newest run: a regression when it sits after a
// change point for the worse that at most cfg.Recent runs follow, an
// improvement after one for the better, else no change.
func Check(series []Series, cfg Config) []Verdict {
	cfg = cfg.withDefaults()
	out := make([]Verdict, 0, len(series))
	for _, s := range series {
		v := Verdict{Series: s.SeriesKey, Metric: s.Metric.Name, Status: StatusNoChange}
		if n := len(s.Changes); n > 0 {
			last := s.Changes[n-1]
			since := len(s.Points) - last.Index
			if since <= cfg.Recent {
				v.Change, v.RunsSince = &last, since
				v.Status = StatusImprovement
				if last.Worse {
					v.Status = StatusRegression
				}
			}
		}
		out = append(out, v)
	}
	return out
}
