package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

// extraLabels are the labels span_metrics adds besides its configured
// span-attribute dimensions, and the labels Prometheus adds.
var extraLabels = []string{"span_name", "span_kind", "status_code", "service_name", "le", "job", "instance"}

func dashboardFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), DashboardsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no dashboards in %s", DashboardsDir)
	}
	return files
}

// TestDashboardNamesAreEmitted checks that every metric a dashboard queries
// is one ortel emits (a registered metric, under the name the collector's
// Prometheus exporter gives it) or one the collector derives (span metrics),
// and that every label is a metric attribute ortel sets or a label
// Prometheus and span_metrics add. The end-to-end test checks the same names
// against what a real Prometheus received.
func TestDashboardNamesAreEmitted(t *testing.T) {
	known := map[string]string{}
	for _, m := range semconv.Metrics {
		for _, s := range MetricSeries(m) {
			known[s] = m.Name
		}
	}
	for _, s := range SpanMetricsSeries {
		known[s] = "span_metrics connector"
	}
	labels := map[string]bool{}
	for _, a := range semconv.Attributes {
		if !a.SpansOnly {
			labels[LabelName(a.Key)] = true
		}
	}
	for _, l := range extraLabels {
		labels[l] = true
	}
	for _, f := range dashboardFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			d, err := LoadDashboard(f)
			if err != nil {
				t.Fatal(err)
			}
			qs, err := d.Queries()
			if err != nil {
				t.Fatal(err)
			}
			if len(qs) == 0 {
				t.Fatal("no queries")
			}
			for _, q := range qs {
				if len(q.Query.Metrics) == 0 && !strings.HasPrefix(q.Where, "variable") {
					t.Errorf("%s selects no metric: %s", q.Where, q.Expr)
				}
				for _, m := range q.Query.Metrics {
					if _, ok := known[m]; !ok {
						t.Errorf("%s: metric %q is not emitted by ortel (see docs/metrics.md and stack.PromName)", q.Where, m)
					}
				}
				for _, l := range q.Query.Labels {
					if !labels[l] {
						t.Errorf("%s: label %q is not a metric attribute ortel sets", q.Where, l)
					}
				}
			}
		})
	}
}

// The overview dashboard has the panels the issue lists.
func TestDashboardCoversTheIssue(t *testing.T) {
	d, err := LoadDashboard(filepath.Join(repoRoot(t), DashboardsDir, "ortel.json"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := d.Queries()
	if err != nil {
		t.Fatal(err)
	}
	uses := func(metric string) bool {
		return slices.ContainsFunc(qs, func(q DashboardQuery) bool { return slices.Contains(q.Query.Metrics, metric) })
	}
	for _, q := range []string{"0.5", "0.95", "0.99", "0.999"} {
		re := regexp.MustCompile(`histogram_quantile\(\s*` + regexp.QuoteMeta(q) + `\s*,.*onnxruntime_run_duration_seconds_bucket`)
		if !slices.ContainsFunc(qs, func(dq DashboardQuery) bool { return re.MatchString(dq.Expr) }) {
			t.Errorf("no latency quantile %s over the run histogram", q)
		}
	}
	need := []struct{ what, metric string }{
		{"throughput and error rate", "onnxruntime_run_duration_seconds_count"},
		{"stage breakdown", "ortel_stage_duration_seconds_sum"},
		{"top operators by time", "onnxruntime_node_duration_seconds_sum"},
		{"CPU utilization", "system_cpu_utilization_ratio"},
		{"memory utilization", "system_memory_utilization_ratio"},
		{"GPU utilization", "hw_gpu_utilization_ratio"},
		{"power", "hw_power_watts"},
		{"energy per inference", "ortel_inference_energy_joules"},
		{"span metrics", "traces_span_metrics_calls_total"},
	}
	for _, n := range need {
		if !uses(n.metric) {
			t.Errorf("%s: no query reads %s", n.what, n.metric)
		}
	}
}

func TestDashboardStructure(t *testing.T) {
	var ds struct {
		Datasources []struct {
			Type string `yaml:"type"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(repoRoot(t), ProvisioningDir, "datasources", "datasources.yaml"), &ds)
	types := map[string]bool{}
	for _, d := range ds.Datasources {
		types[d.Type] = true
	}
	dashUIDs := map[string]string{}
	for _, f := range dashboardFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			d, err := LoadDashboard(f)
			if err != nil {
				t.Fatal(err)
			}
			if d.UID == "" || d.Title == "" {
				t.Error("a provisioned dashboard needs a fixed uid and a title")
			}
			if prev, dup := dashUIDs[d.UID]; dup {
				t.Errorf("uid %q also used by %s", d.UID, prev)
			}
			dashUIDs[d.UID] = f
			// Data sources are chosen through datasource variables, so the
			// dashboard fits any Grafana (the Helm chart's ConfigMap for the
			// sidecar included): a reference is "" (the panel's) or
			// ${variable} of a variable of its type.
			dsVars := map[string]string{}
			for _, v := range d.Templating.List {
				if v.Type == "datasource" {
					var typ string
					if err := json.Unmarshal(v.Query, &typ); err != nil || !types[typ] {
						t.Errorf("datasource variable %s: query %s is not a provisioned data source type", v.Name, v.Query)
					}
					dsVars[v.Name] = typ
				}
			}
			checkRef := func(where string, ds Datasource) {
				if ds.UID == "" {
					return
				}
				name, ok := strings.CutPrefix(ds.UID, "${")
				name, ok2 := strings.CutSuffix(name, "}")
				if !ok || !ok2 {
					t.Errorf("%s hard-codes data source uid %q: use a datasource variable", where, ds.UID)
				} else if typ, known := dsVars[name]; !known || typ != ds.Type {
					t.Errorf("%s uses %s, which is no datasource variable of type %q", where, ds.UID, ds.Type)
				}
			}
			for _, v := range d.Templating.List {
				checkRef("variable "+v.Name, v.Datasource)
			}
			for _, l := range d.Links {
				if strings.Contains(l.URL, "://") {
					t.Errorf("link %q goes to %s, a fixed address: link through a data source variable", l.Title, l.URL)
				}
			}
			ids := map[int]bool{}
			for _, p := range d.AllPanels() {
				if ids[p.ID] {
					t.Errorf("panel id %d used twice", p.ID)
				}
				ids[p.ID] = true
				checkRef(fmt.Sprintf("panel %q", p.Title), p.Datasource)
				for _, tg := range p.Targets {
					checkRef(fmt.Sprintf("panel %q query %s", p.Title, tg.RefID), tg.Datasource)
				}
				if p.Type != "row" && len(p.Targets) == 0 {
					t.Errorf("panel %q has no queries", p.Title)
				}
			}
		})
	}
}

func TestDashboardQueries(t *testing.T) {
	const doc = `{
  "uid": "x", "title": "x",
  "panels": [
    {"id": 1, "type": "row", "title": "r", "panels": [
      {"id": 2, "type": "timeseries", "title": "inner", "targets": [{"refId": "A", "expr": "rate(a_total[5m])"}]}
    ]},
    {"id": 3, "type": "stat", "title": "outer", "targets": [{"refId": "A", "expr": "b{l=\"1\"}"}, {"refId": "B", "expr": ""}]}
  ],
  "templating": {"list": [
    {"name": "v1", "type": "query", "query": "label_values(c_count, model)"},
    {"name": "v2", "type": "query", "query": {"query": "label_values(job)", "refId": "x"}},
    {"name": "v3", "type": "query", "query": "query_result(topk(3, d))"},
    {"name": "v4", "type": "custom", "query": "a,b"}
  ]}
}`
	p := filepath.Join(t.TempDir(), "d.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := LoadDashboard(p)
	if err != nil {
		t.Fatal(err)
	}
	names, err := d.MetricNames()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a_total", "b", "c_count", "d"}; !slices.Equal(names, want) {
		t.Errorf("MetricNames = %q, want %q", names, want)
	}
	qs, _ := d.Queries()
	var where []string
	for _, q := range qs {
		where = append(where, q.Where)
	}
	want := []string{`panel "inner" query A`, `panel "outer" query A`, "variable v1", "variable v2", "variable v3"}
	if !slices.Equal(where, want) {
		t.Errorf("queries at %q, want %q", where, want)
	}
	if !slices.Equal(qs[2].Query.Labels, []string{"model"}) || !slices.Equal(qs[3].Query.Labels, []string{"job"}) {
		t.Errorf("variable labels = %q, %q", qs[2].Query.Labels, qs[3].Query.Labels)
	}
}

func TestLoadDashboardErrors(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(p, []byte(`{"panels": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDashboard(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("error = %v; want one naming %s", err, p)
	}
	bad := &Dashboard{Panels: []Panel{{Title: "p", Targets: []Target{{RefID: "A", Expr: `x{a="`}}}}}
	if _, err := bad.Queries(); err == nil || !strings.Contains(err.Error(), `panel "p" query A`) {
		t.Errorf("error = %v; want one naming the panel", err)
	}
}
