package stack

import (
	"slices"
	"testing"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		name    string
		expr    string
		metrics []string
		labels  []string
	}{
		{
			name:    "quantile over buckets",
			expr:    `histogram_quantile(0.999, sum by (le, onnxruntime_model_name) (rate(onnxruntime_run_duration_seconds_bucket{onnxruntime_model_name=~"$model", onnxruntime_run_profiled!="true"}[$__rate_interval])))`,
			metrics: []string{"onnxruntime_run_duration_seconds_bucket"},
			labels:  []string{"le", "onnxruntime_model_name", "onnxruntime_run_profiled"},
		},
		{
			name:    "ratio of two selectors",
			expr:    "sum(rate(a_count{error_type!=\"\"}[5m])) / sum(rate(a_count[5m])) or vector(0)",
			metrics: []string{"a_count"},
			labels:  []string{"error_type"},
		},
		{
			name:    "bare metric, offset and duration",
			expr:    "up offset 1h30m > bool 0.5e-3",
			metrics: []string{"up"},
		},
		{
			name:    "aggregation with clause after",
			expr:    "topk(10, sum(increase(x_sum[$__range])) by (op)) * on (job) group_left(host_name) target_info",
			metrics: []string{"target_info", "x_sum"},
			labels:  []string{"host_name", "job", "op"},
		},
		{
			name:    "name matcher and escaped strings",
			expr:    `{__name__="hw_power_watts", hw_type="cpu\"x"} + ignoring(hw_id) y`,
			metrics: []string{"hw_power_watts", "y"},
			labels:  []string{"hw_id", "hw_type"},
		},
		{
			name:    "grafana variables everywhere",
			expr:    `rate(z_total{job="${job:regex}"}[${__interval}]) * $scale`,
			metrics: []string{"z_total"},
			labels:  []string{"job"},
		},
		{
			name:    "keywords are not names",
			expr:    "a and b unless c or d",
			metrics: []string{"a", "b", "c", "d"},
		},
		{
			name:    "subquery",
			expr:    "max_over_time(rate(q_total[1m])[10m:1m])",
			metrics: []string{"q_total"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuery(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(q.Metrics, tt.metrics) {
				t.Errorf("metrics = %q, want %q", q.Metrics, tt.metrics)
			}
			if !slices.Equal(q.Labels, tt.labels) && (len(q.Labels) != 0 || len(tt.labels) != 0) {
				t.Errorf("labels = %q, want %q", q.Labels, tt.labels)
			}
		})
	}
}

func TestParseQueryErrors(t *testing.T) {
	tests := []struct{ name, expr string }{
		{"unterminated string", `x{a="b}`},
		{"unclosed braces", `x{a="b"`},
		{"unclosed range", `rate(x[5m)`},
		{"value not quoted", `x{a=b}`},
		{"unclosed label list", `sum by (a, b x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseQuery(tt.expr); err == nil {
				t.Errorf("ParseQuery(%q) gave no error", tt.expr)
			}
		})
	}
}
