package e2e

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/stack"
)

func loadDashboard(t *testing.T) *stack.Dashboard {
	t.Helper()
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	d, err := stack.LoadDashboard(filepath.Join(root, stack.DashboardsDir, "ortel.json"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestExpandGrafana(t *testing.T) {
	vars := map[string]string{"model": "det", "__rate_interval": "42s"}
	tests := []struct{ in, want string }{
		{`rate(x{m=~"$model"}[$__rate_interval])`, `rate(x{m=~"det"}[42s])`},
		{`x{m=~"${model}"}`, `x{m=~"det"}`},
		{`x{m=~"${model:regex}"}`, `x{m=~"det"}`},
		{`x{m=~"[[model]]"}`, `x{m=~"det"}`},
		{`x[5m:1m]`, `x[5m:1m]`},
	}
	for _, tt := range tests {
		got, err := ExpandGrafana(tt.in, vars)
		if err != nil || got != tt.want {
			t.Errorf("ExpandGrafana(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := ExpandGrafana(`x{a="$model", b="$gpu"}[$__range]`, vars); err == nil ||
		!strings.Contains(err.Error(), "gpu") || !strings.Contains(err.Error(), "__range") {
		t.Errorf("unknown variables: error %v, want one naming gpu and __range", err)
	}
}

func TestMultiValue(t *testing.T) {
	if got := MultiValue([]string{"a.onnx"}); got != `a\.onnx` {
		t.Errorf("one value: %q", got)
	}
	if got := MultiValue([]string{"a.onnx", "b"}); got != `(a\.onnx|b)` {
		t.Errorf("two values: %q", got)
	}
}

func TestHasData(t *testing.T) {
	if HasData(nil) || HasData([]Sample{{Value: math.NaN()}, {Value: math.Inf(1)}}) {
		t.Error("no samples, or only NaN and Inf, is no data")
	}
	if !HasData([]Sample{{Value: math.NaN()}, {Value: 0}}) {
		t.Error("a zero is data")
	}
}

func TestLabelValuesQuery(t *testing.T) {
	sel, label, ok := LabelValuesQuery(`label_values(onnxruntime_run_duration_seconds_count{job="x"}, onnxruntime_model_name)`)
	if !ok || sel != `onnxruntime_run_duration_seconds_count{job="x"}` || label != "onnxruntime_model_name" {
		t.Errorf("got %q %q %v", sel, label, ok)
	}
	if _, _, ok := LabelValuesQuery(`query_result(up)`); ok {
		t.Error("query_result is not label_values")
	}
}

// Every panel query of the shipped dashboard expands with the values the
// end-to-end test gives (its variables and Grafana's built-ins) into PromQL
// with no variable left.
func TestDashboardQueriesExpand(t *testing.T) {
	d := loadDashboard(t)
	vars, err := Variables(d)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"__rate_interval": "60s", "__range": "60s", "__interval": "1s"}
	for name, text := range vars {
		if _, _, ok := LabelValuesQuery(text); !ok {
			t.Errorf("variable %s: %q is not label_values(selector, label), the one form the e2e resolves", name, text)
		}
		values[name] = "m"
	}
	qs := PanelQueries(d)
	if len(qs) == 0 {
		t.Fatal("no panel queries")
	}
	for _, q := range qs {
		expr, err := ExpandGrafana(q.Expr, values)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if strings.Contains(expr, "$") {
			t.Errorf("%s: %q still holds a variable", q, expr)
		}
		if _, err := stack.ParseQuery(expr); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// An excused panel exists and reads only metrics that need the hardware it
// is excused for; a panel that is not excused reads none that need any, so
// the e2e can require its data on every machine.
func TestExcusedPanelsNeedHardware(t *testing.T) {
	d := loadDashboard(t)
	titles := map[string]bool{}
	for _, q := range PanelQueries(d) {
		titles[q.Panel] = true
		names, err := stack.MetricNames(q.Expr)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		need, excused := ExcusedPanels[q.Panel]
		for _, n := range names {
			got := Needs(n)
			switch {
			case excused && got != need:
				t.Errorf("%s is excused when the machine lacks %q, but reads %s, which needs %q", q, need, n, got)
			case !excused && got != "":
				t.Errorf("%s reads %s, which needs %q: excuse the panel in ExcusedPanels", q, n, got)
			}
		}
	}
	for title := range ExcusedPanels {
		if !titles[title] {
			t.Errorf("ExcusedPanels names %q, which is no panel of the dashboard", title)
		}
	}
	if !slices.Contains([]string{"gpu", "energy"}, ExcusedPanels["GPU utilization"]) {
		t.Error("GPU utilization should be excused for a missing GPU")
	}
}
