package helmcheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"

	"github.com/ortel-dev/ortel/test/stack"
)

// collectorJob is the job the alert rules give the collector's own
// metrics: the one OrtelCollectorDown selects on up.
func collectorJob(t *testing.T) string {
	t.Helper()
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	var rules stack.RuleGroups
	if err := stack.LoadYAML(filepath.Join(root, stack.RulesFile), &rules); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\bup\{job="([^"]+)"\}`)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if m := re.FindStringSubmatch(r.Expr); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no rule of %s selects up{job=...}", stack.RulesFile)
	return ""
}

// TestChartMonitors renders each monitor kind and checks that it scrapes
// both endpoints of every gateway pod, with the labels the rules and the
// dashboard expect: the senders' job and instance on prom-metrics
// (honorLabels, as prometheus.yml), and the job OrtelCollectorDown reads on
// the collector's own metrics.
func TestChartMonitors(t *testing.T) {
	job := collectorJob(t)
	for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
		t.Run(kind, func(t *testing.T) {
			key := map[string]string{"ServiceMonitor": "serviceMonitor", "PodMonitor": "podMonitor"}[kind]
			objs := render(t, key+":\n  enabled: true\n  interval: 20s\n  labels:\n    release: prom\n")
			checkCommon(t, objs)
			o := get(t, objs, kind, "rel-ortel-gateway")
			dep := get(t, objs, "Deployment", "rel-ortel-gateway").Deployment
			svc := get(t, objs, "Service", "rel-ortel-gateway").Service
			type endpoint struct {
				port        string
				honorLabels bool
				interval    monitoringv1.Duration
				relabel     []monitoringv1.RelabelConfig
			}
			var eps []endpoint
			var selector map[string]string
			var namespaces []string
			var labels map[string]string
			var ports []string // the port names the monitor may name
			switch {
			case o.ServiceMonitor != nil:
				sm := o.ServiceMonitor
				labels, selector, namespaces = sm.Labels, sm.Spec.Selector.MatchLabels, sm.Spec.NamespaceSelector.MatchNames
				for _, e := range sm.Spec.Endpoints {
					eps = append(eps, endpoint{e.Port, e.HonorLabels, e.Interval, e.RelabelConfigs})
				}
				if !mapsEqual(selector, svc.Labels) && !subset(selector, svc.Labels) {
					t.Errorf("ServiceMonitor selects %v, the gateway Service is labelled %v", selector, svc.Labels)
				}
				for _, p := range svc.Spec.Ports {
					ports = append(ports, p.Name)
				}
			case o.PodMonitor != nil:
				pm := o.PodMonitor
				labels, selector, namespaces = pm.Labels, pm.Spec.Selector.MatchLabels, pm.Spec.NamespaceSelector.MatchNames
				for _, e := range pm.Spec.PodMetricsEndpoints {
					var port string
					if e.Port != nil {
						port = *e.Port
					}
					eps = append(eps, endpoint{port, e.HonorLabels, e.Interval, e.RelabelConfigs})
				}
				if !subset(selector, dep.Spec.Template.Labels) {
					t.Errorf("PodMonitor selects %v, gateway pods are labelled %v", selector, dep.Spec.Template.Labels)
				}
				for _, p := range dep.Spec.Template.Spec.Containers[0].Ports {
					ports = append(ports, p.Name)
				}
			}
			if labels["release"] != "prom" {
				t.Errorf("%s labels %v: the values' labels are missing", kind, labels)
			}
			if !slices.Equal(namespaces, []string{"observability"}) {
				t.Errorf("%s namespaces %v, want the release's", kind, namespaces)
			}
			seen := map[string]bool{}
			for _, e := range eps {
				seen[e.port] = true
				if !slices.Contains(ports, e.port) {
					t.Errorf("%s scrapes port %q, which the target does not name (%v)", kind, e.port, ports)
				}
				if e.interval != "20s" {
					t.Errorf("%s endpoint %s: interval %q, want the values' 20s", kind, e.port, e.interval)
				}
				switch e.port {
				case "prom-metrics":
					if !e.honorLabels {
						t.Errorf("%s prom-metrics: honorLabels off, so every sender's job and instance would be replaced by the gateway's", kind)
					}
				case "telemetry":
					ok := slices.ContainsFunc(e.relabel, func(r monitoringv1.RelabelConfig) bool {
						return r.TargetLabel == "job" && r.Replacement != nil && *r.Replacement == job
					})
					if !ok || e.honorLabels {
						t.Errorf("%s telemetry: relabelings %+v, honorLabels %v; want job=%q (what OrtelCollectorDown selects)", kind, e.relabel, e.honorLabels, job)
					}
				}
			}
			if !seen["prom-metrics"] || !seen["telemetry"] || len(eps) != 2 {
				t.Errorf("%s endpoints %v: want prom-metrics and telemetry", kind, eps)
			}
		})
	}
	// Both at once would scrape every pod twice.
	dir := chartDir(t)
	p := filepath.Join(t.TempDir(), "v.yaml")
	if err := os.WriteFile(p, []byte("serviceMonitor:\n  enabled: true\npodMonitor:\n  enabled: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(dir, "rel", "observability", p); err == nil || !strings.Contains(err.Error(), "podMonitor.enabled") {
		t.Errorf("both monitors on: %v, want an error naming both", err)
	}
}

// subset reports whether every label of sel is in labels.
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// TestChartPrometheusRule: the PrometheusRule holds exactly the groups of
// otelcol-config/rules/ortel.yaml (the chart reads its copy, which must be
// the same bytes), so the rules promtool tests are the rules installed.
func TestChartPrometheusRule(t *testing.T) {
	objs := render(t, "prometheusRule:\n  enabled: true\n  labels:\n    role: alert-rules\n")
	pr := get(t, objs, "PrometheusRule", "rel-ortel").PrometheusRule
	if pr.Labels["role"] != "alert-rules" {
		t.Errorf("PrometheusRule labels %v: the values' labels are missing", pr.Labels)
	}
	root, _ := stack.RepoRoot(".")
	src := mustRead(t, filepath.Join(root, stack.RulesFile))
	if copied := mustRead(t, filepath.Join(chartDir(t), "files/ortel-rules.yaml")); string(copied) != string(src) {
		t.Errorf("the chart's files/ortel-rules.yaml differs from %s: copy it again", stack.RulesFile)
	}
	var want map[string]any
	if err := yaml.Unmarshal(src, &want); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := yaml.Marshal(got)
		w, _ := yaml.Marshal(want)
		t.Errorf("PrometheusRule spec differs from %s:\n--- rendered\n%s\n--- source\n%s", stack.RulesFile, g, w)
	}
	var alerts int
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				alerts++
				if !strings.HasPrefix(r.Annotations["runbook_url"], "https://") {
					t.Errorf("alert %s: no runbook_url", r.Alert)
				}
			}
		}
	}
	if alerts == 0 {
		t.Error("the PrometheusRule holds no alert")
	}
}

// TestChartGrafanaDashboard: a ConfigMap the Grafana sidecar picks up (its
// label), holding the repository's dashboard byte for byte, small enough
// for a ConfigMap.
func TestChartGrafanaDashboard(t *testing.T) {
	objs := render(t, "grafanaDashboard:\n  enabled: true\n  annotations:\n    grafana_folder: ortel\n")
	cm := get(t, objs, "ConfigMap", "rel-ortel-dashboard").ConfigMap
	if cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] != "ortel" {
		t.Errorf("dashboard ConfigMap labels %v, annotations %v: want grafana_dashboard=1 and the folder annotation", cm.Labels, cm.Annotations)
	}
	root, _ := stack.RepoRoot(".")
	src := mustRead(t, filepath.Join(root, stack.DashboardsDir, "ortel.json"))
	if copied := mustRead(t, filepath.Join(chartDir(t), "files/ortel.json")); string(copied) != string(src) {
		t.Errorf("the chart's files/ortel.json differs from %s/ortel.json: copy it again", stack.DashboardsDir)
	}
	if cm.Data["ortel.json"] != string(src) {
		t.Error("the dashboard ConfigMap's ortel.json is not the repository's dashboard")
	}
	if !json.Valid([]byte(cm.Data["ortel.json"])) {
		t.Error("the dashboard ConfigMap's ortel.json is not JSON")
	}
	// The API server refuses a ConfigMap over 1 MiB.
	if n := len(cm.Data["ortel.json"]); n > 1<<20-4096 {
		t.Errorf("dashboard is %d bytes: too close to a ConfigMap's 1 MiB", n)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
