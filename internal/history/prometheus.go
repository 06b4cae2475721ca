package history

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/configerr"
)

// Production series: the same change-point detection over a Prometheus
// range query of the run-duration histogram that instrumented services
// export (onnxruntime.run.duration), so an SRE asks when p99 of a model
// changed, and with which value of a label (an ONNX Runtime version label,
// a service version) it changed.

// PromQuery says what to read from Prometheus.
type PromQuery struct {
	// URL of the Prometheus server, e.g. http://127.0.0.1:9090.
	URL string
	// Quantile of the run duration, e.g. 0.99; 0 reads the mean.
	Quantile float64
	// Model selects one model (onnxruntime_model_name); "" reads all.
	Model string
	// Labels are kept beside the model and job: their values are what a
	// change is attributed to (default: DefaultPromLabels). A label no
	// series has is empty.
	Labels []string
	// Query replaces the query built from the fields above; it must
	// return one series per model (label onnxruntime_model_name).
	Query string
	// Start and End bound the range; Step is the distance between points,
	// and the rate window (default 1h).
	Start, End time.Time
	Step       time.Duration
}

// DefaultPromLabels are PromQuery.Labels' default.
var DefaultPromLabels = []string{"onnxruntime_version", "service_version"}

// Validate reports what is wrong with q, in the history's words.
func (q PromQuery) Validate() error {
	u, err := url.Parse(q.URL)
	switch {
	case q.URL == "":
		return configerr.New("history", "no Prometheus URL given: set {PromQuery.URL}")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return configerr.New("history", "{PromQuery.URL} %q: want http://HOST:PORT", q.URL)
	case !slices.Contains([]float64{0, 0.5, 0.9, 0.95, 0.99, 0.999}, q.Quantile):
		return configerr.New("history", "{PromQuery.Quantile} %g: want 0.5, 0.9, 0.95, 0.99 or 0.999, or 0 for the mean", q.Quantile)
	case q.Step < 0:
		return configerr.New("history", "{PromQuery.Step} %s: want a positive duration", q.Step)
	case !q.Start.IsZero() && !q.End.IsZero() && !q.Start.Before(q.End):
		return configerr.New("history", "{PromQuery.Range} from %s to %s: the start must come before the end", q.Start.Format(time.RFC3339), q.End.Format(time.RFC3339))
	}
	for _, l := range q.Labels {
		if !validLabel(l) {
			return configerr.New("history", "{PromQuery.Labels} %q: want a Prometheus label name", l)
		}
	}
	return nil
}

func validLabel(l string) bool {
	for i, c := range l {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return l != ""
}

// PromMetric is the metric q's series measure: p99 for quantile 0.99, or
// mean.
func PromMetric(q PromQuery) string { return q.metricName() }

func (q PromQuery) metricName() string {
	if q.Quantile == 0 {
		return "mean"
	}
	return "p" + strconv.FormatFloat(100*q.Quantile, 'f', -1, 64)
}

// PromQL returns the query q runs.
func (q PromQuery) PromQL() string {
	if q.Query != "" {
		return q.Query
	}
	step := q.step()
	by := strings.Join(append([]string{"job", "onnxruntime_model_name"}, q.labels()...), ", ")
	sel := `onnxruntime_run_profiled!="true", error_type=""`
	if q.Model != "" {
		sel += `, onnxruntime_model_name="` + strings.ReplaceAll(strings.ReplaceAll(q.Model, `\`, `\\`), `"`, `\"`) + `"`
	}
	w := promDuration(step)
	if q.Quantile == 0 {
		return fmt.Sprintf("sum by (%s) (rate(onnxruntime_run_duration_seconds_sum{%s}[%s])) / sum by (%s) (rate(onnxruntime_run_duration_seconds_count{%s}[%s]))",
			by, sel, w, by, sel, w)
	}
	return fmt.Sprintf("histogram_quantile(%g, sum by (le, %s) (rate(onnxruntime_run_duration_seconds_bucket{%s}[%s])))", q.Quantile, by, sel, w)
}

func (q PromQuery) labels() []string {
	if q.Labels == nil {
		return DefaultPromLabels
	}
	return q.Labels
}

func (q PromQuery) step() time.Duration {
	if q.Step == 0 {
		return time.Hour
	}
	return q.Step
}

func promDuration(d time.Duration) string {
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	if d%time.Minute == 0 {
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}

// QueryPrometheus runs q as a range query and returns one run per model,
// job and time step, with q's labels as its settings: AnalyzeRuns finds
// their change points like those of bench runs.
func QueryPrometheus(ctx context.Context, client *http.Client, q PromQuery) ([]Run, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	end := q.End
	if end.IsZero() {
		end = time.Now()
	}
	start := q.Start
	if start.IsZero() {
		start = end.Add(-7 * 24 * time.Hour)
	}
	form := url.Values{"query": {q.PromQL()}, "start": {strconv.FormatInt(start.Unix(), 10)},
		"end": {strconv.FormatInt(end.Unix(), 10)}, "step": {strconv.FormatFloat(q.step().Seconds(), 'f', -1, 64)}}
	endpoint := strings.TrimSuffix(q.URL, "/") + "/api/v1/query_range"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("query Prometheus %s: %w", q.URL, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query Prometheus %s: %w", q.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("query Prometheus %s: read the answer: %w", q.URL, err)
	}
	return parseRange(body, resp.StatusCode, q)
}

// promAnswer is the JSON of /api/v1/query_range.
type promAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

// parseRange turns a range query's answer into runs.
func parseRange(body []byte, status int, q PromQuery) ([]Run, error) {
	var a promAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("query Prometheus %s answered %d with no readable JSON: %w", q.URL, status, err)
	}
	if a.Status != "success" {
		return nil, fmt.Errorf("query Prometheus %s: query failed (%s): %s", q.URL, a.ErrorType, a.Error)
	}
	if a.Data.ResultType != "matrix" {
		return nil, fmt.Errorf("query Prometheus %s: the query gave a %s, not a range of series (matrix)", q.URL, a.Data.ResultType)
	}
	type key struct {
		model, job string
		at         int64
	}
	type acc struct {
		sum    float64
		n      int
		labels map[string][]string
	}
	points := map[key]*acc{}
	metric := q.metricName()
	for _, s := range a.Data.Result {
		model := s.Metric["onnxruntime_model_name"]
		if model == "" {
			return nil, fmt.Errorf("query Prometheus %s: a series of the answer has no onnxruntime_model_name label (%v)", q.URL, s.Metric)
		}
		for _, v := range s.Values {
			at, val, err := promPoint(v)
			if err != nil {
				return nil, fmt.Errorf("query Prometheus %s: series %v: %w", q.URL, s.Metric, err)
			}
			if !(val > 0) || val > 1e300 { // NaN (no runs in the window), +Inf (above the top bucket), 0
				continue
			}
			k := key{model, s.Metric["job"], at.UnixMilli()}
			p := points[k]
			if p == nil {
				p = &acc{labels: map[string][]string{}}
				points[k] = p
			}
			p.sum += val
			p.n++
			for _, l := range q.labels() {
				p.labels[l] = append(p.labels[l], s.Metric[l])
			}
		}
	}
	runs := make([]Run, 0, len(points))
	for k, p := range points {
		r := Run{Time: time.UnixMilli(k.at).UTC(), Model: k.model, Workload: "production, job " + orNone(k.job),
			Machine: "Prometheus " + q.URL, Source: "prometheus", Metrics: map[string]Value{metric: {V: p.sum / float64(p.n)}}}
		for _, l := range q.labels() {
			vals := p.labels[l]
			sort.Strings(vals)
			r.Settings = append(r.Settings, analysis.Setting{Name: l, Value: strings.Join(vals, "+")})
		}
		runs = append(runs, r)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Time.Before(runs[j].Time) })
	for i := range runs {
		runs[i].ID = int64(i + 1)
	}
	return runs, nil
}

func promPoint(v [2]any) (time.Time, float64, error) {
	ts, ok := v[0].(float64)
	s, ok2 := v[1].(string)
	if !ok || !ok2 {
		return time.Time{}, 0, fmt.Errorf("point %v: want [time, \"value\"]", v)
	}
	val, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("point %v: %w", v, err)
	}
	return time.UnixMilli(int64(ts * 1000)).UTC(), val, nil
}
