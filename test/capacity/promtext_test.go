package main

import (
	"strings"
	"testing"
)

func TestParseExposition(t *testing.T) {
	text := `# HELP otelcol_receiver_accepted_metric_points Number of points.
# TYPE otelcol_receiver_accepted_metric_points counter
otelcol_receiver_accepted_metric_points{receiver="otlp",transport="grpc"} 1200
otelcol_receiver_accepted_metric_points{receiver="span_metrics",transport=""} 30
otelcol_receiver_refused_metric_points{receiver="otlp",transport="grpc"} 0
weird{l="a}b\"c"} 2.5 1700000000000
up 1
nan_metric NaN
# EOF
`
	e, err := ParseExposition(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"otelcol_receiver_accepted_metric_points": 1230, "otelcol_receiver_refused_metric_points": 0, "weird": 2.5, "up": 1}
	for k, v := range want {
		if e.Sums[k] != v {
			t.Errorf("Sums[%s] = %v, want %v", k, e.Sums[k], v)
		}
	}
	if e.Series != 6 {
		t.Errorf("Series = %d, want 6", e.Series)
	}
	for _, bad := range []string{"novalue\n", "x{a=\"1\" 2\n", "x one\n", "x 1 2 3\n", "{a=\"b\"} 1\n"} {
		if _, err := ParseExposition(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseExposition(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

// FuzzParseExposition: any input parses or fails with an error; never a
// panic, and never more series than sample lines.
func FuzzParseExposition(f *testing.F) {
	f.Add("a 1\n")
	f.Add("a{b=\"c\\\"}\"} 2 3\n# c\n")
	f.Add("x{l=\"}\"} NaN\n")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExposition(strings.NewReader(s))
		if err != nil {
			return
		}
		if e.Series > strings.Count(s, "\n")+1 {
			t.Fatalf("%d series from %d lines", e.Series, strings.Count(s, "\n")+1)
		}
	})
}
