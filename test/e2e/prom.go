package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Prom is a client of the Prometheus HTTP API (v1).
type Prom struct {
	Base   string // e.g. http://127.0.0.1:9090
	Client *http.Client
}

// Sample is one element of an instant vector.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// apiResponse is the envelope of every /api/v1 answer.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
}

func (p *Prom) client() *http.Client {
	if p.Client != nil {
		return p.Client
	}
	return http.DefaultClient
}

// get fetches an /api/v1 path and decodes its data into v.
func (p *Prom) get(ctx context.Context, path string, q url.Values, v any) error {
	u := p.Base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("prometheus %s: %w", path, err)
	}
	resp, err := p.client().Do(req)
	if err != nil {
		return fmt.Errorf("prometheus %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("prometheus %s: read the answer: %w", path, err)
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("prometheus %s: HTTP %d, not an API answer: %.200q", path, resp.StatusCode, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("prometheus %s %s: %s: %s", path, q.Encode(), r.ErrorType, r.Error)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		return fmt.Errorf("prometheus %s: decode the data: %w", path, err)
	}
	return nil
}

// Query evaluates an instant query (now) and returns its vector. A scalar
// result comes back as one sample without labels.
func (p *Prom) Query(ctx context.Context, query string) ([]Sample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {query}}, &data); err != nil {
		return nil, err
	}
	switch data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(data.Result, &vec); err != nil {
			return nil, fmt.Errorf("query %q: decode the vector: %w", query, err)
		}
		out := make([]Sample, 0, len(vec))
		for _, s := range vec {
			v, err := sampleValue(s.Value)
			if err != nil {
				return nil, fmt.Errorf("query %q: %w", query, err)
			}
			out = append(out, Sample{Labels: s.Metric, Value: v})
		}
		return out, nil
	case "scalar":
		var sc [2]any
		if err := json.Unmarshal(data.Result, &sc); err != nil {
			return nil, fmt.Errorf("query %q: decode the scalar: %w", query, err)
		}
		v, err := sampleValue(sc)
		if err != nil {
			return nil, fmt.Errorf("query %q: %w", query, err)
		}
		return []Sample{{Labels: map[string]string{}, Value: v}}, nil
	}
	return nil, fmt.Errorf("query %q: result type %q, want an instant vector", query, data.ResultType)
}

// QueryRange evaluates a range query from start to end at step, as Grafana
// does for a panel, and returns every point of every series as a sample
// (the series' labels with the point's value).
func (p *Prom) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]Sample, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	q := url.Values{
		"query": {query},
		"start": {strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64)},
		"end":   {strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	if err := p.get(ctx, "/api/v1/query_range", q, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "matrix" {
		return nil, fmt.Errorf("range query %q: result type %q, want a matrix", query, data.ResultType)
	}
	var out []Sample
	for _, s := range data.Result {
		for _, v := range s.Values {
			f, err := sampleValue(v)
			if err != nil {
				return nil, fmt.Errorf("range query %q: %w", query, err)
			}
			out = append(out, Sample{Labels: s.Metric, Value: f})
		}
	}
	return out, nil
}

func sampleValue(v [2]any) (float64, error) {
	s, ok := v[1].(string)
	if !ok {
		return 0, fmt.Errorf("sample value %v is not a string", v[1])
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("sample value %q: %w", s, err)
	}
	return f, nil
}

// Series returns the label sets of the series matching a selector.
func (p *Prom) Series(ctx context.Context, match string) ([]map[string]string, error) {
	var data []map[string]string
	err := p.get(ctx, "/api/v1/series", url.Values{"match[]": {match}}, &data)
	return data, err
}

// LabelValues returns the values of a label over all series; "__name__"
// gives every metric name Prometheus holds.
func (p *Prom) LabelValues(ctx context.Context, label string) ([]string, error) {
	var data []string
	if err := p.get(ctx, "/api/v1/label/"+url.PathEscape(label)+"/values", nil, &data); err != nil {
		return nil, err
	}
	slices.Sort(data)
	return data, nil
}

// Ready reports whether Prometheus answers /-/ready with 200.
func (p *Prom) Ready(ctx context.Context) error {
	return httpOK(ctx, p.client(), p.Base+"/-/ready")
}

// httpOK GETs u and wants status 200.
func httpOK(ctx context.Context, c *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	return nil
}

// ErrNotYet is what a Poll condition returns while the awaited state has
// not arrived; Poll keeps trying.
var ErrNotYet = errors.New("not yet")

// Poll calls cond every interval until it returns nil, returns an error
// that is not ErrNotYet, or ctx ends. On timeout the error includes cond's
// last answer, so the caller sees what was missing.
func Poll(ctx context.Context, interval time.Duration, cond func(context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error // the last answer given before ctx ended
	for {
		err := cond(ctx)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			// The answer may only say that ctx ended; keep the one before.
		case !errors.Is(err, ErrNotYet):
			return err
		default:
			last = err
		}
		if last == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %v", ctx.Err(), last)
		case <-t.C:
		}
	}
}

// notYet wraps a description of what is missing as ErrNotYet.
func notYet(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrNotYet, fmt.Sprintf(format, args...))
}
