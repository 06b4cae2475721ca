package stack

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/testenv"
)

// The alerting rules pass promtool's checks and unit tests (a case that
// fires and one that stays silent for each alert; see the test file).
func TestAlertRules(t *testing.T) {
	promtool := testenv.Tool(t, "promtool", "scripts/install-prometheus.sh")
	root := repoRoot(t)
	for _, args := range [][]string{
		{"check", "rules", RulesFile},
		{"check", "config", PrometheusConfig},
		{"test", "rules", RuleTestsFile},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// Every alert has a promtool case in which it fires. Its silent case is
// either a test asking for no alert (exp_alerts: []) or a series beside
// the firing one that must not fire: promtool wants the alert list exactly,
// so an extra alert fails the test as a missing one does.
func TestEveryAlertIsTested(t *testing.T) {
	root := repoRoot(t)
	var rules RuleGroups
	if err := LoadYAML(filepath.Join(root, RulesFile), &rules); err != nil {
		t.Fatal(err)
	}
	var tests RuleTests
	if err := LoadYAML(filepath.Join(root, RuleTestsFile), &tests); err != nil {
		t.Fatal(err)
	}
	alerts := rules.Alerts()
	if len(alerts) == 0 {
		t.Fatal("no alerting rules")
	}
	fires := map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertTests {
			if !slices.Contains(alerts, a.Alert) {
				t.Errorf("test %q checks alert %q, which %s does not define", tc.Name, a.Alert, RulesFile)
			}
			if len(a.ExpAlerts) > 0 {
				fires[a.Alert] = true
			}
		}
	}
	for _, a := range alerts {
		if !fires[a] {
			t.Errorf("alert %s has no promtool case in which it fires", a)
		}
	}
	for _, f := range tests.RuleFiles {
		if got := filepath.Join(filepath.Dir(filepath.Join(root, RuleTestsFile)), f); got != filepath.Join(root, RulesFile) {
			t.Errorf("the promtool tests load %s, not %s", got, RulesFile)
		}
	}
}

// collectorOwnMetrics are the collector's own counters the rules read, as
// its Prometheus endpoint names them (0.155: no _total suffix; seen in
// the e2e's Prometheus, or their send/enqueue siblings, which appear once
// an export fails).
var collectorOwnMetrics = []string{
	"otelcol_receiver_refused_spans", "otelcol_receiver_refused_metric_points",
	"otelcol_receiver_failed_spans", "otelcol_receiver_failed_metric_points",
	"otelcol_exporter_send_failed_spans", "otelcol_exporter_send_failed_metric_points",
	"otelcol_exporter_enqueue_failed_spans", "otelcol_exporter_enqueue_failed_metric_points",
}

// Every series a rule reads is a registered metric under its Prometheus
// name, a series the rules record, up, or one of the collector's own
// counters: a misspelt name (a _total too many) selects nothing and the
// alert never fires, which promtool's tests, written with the same name,
// would not notice.
func TestAlertRulesReadRealSeries(t *testing.T) {
	var rules RuleGroups
	if err := LoadYAML(filepath.Join(repoRoot(t), RulesFile), &rules); err != nil {
		t.Fatal(err)
	}
	known := knownSeries("up")
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			names, err := MetricNames(r.Expr)
			if err != nil {
				t.Errorf("rule %s%s: %v", r.Record, r.Alert, err)
				continue
			}
			for _, n := range names {
				if !known[n] {
					t.Errorf("rule %s%s reads %s, which is no registered metric's Prometheus name, recorded series or collector counter", r.Record, r.Alert, n)
				}
			}
		}
	}
}

// knownSeries is every registered metric's Prometheus series, the
// collector's own counters the rules read, and extra.
func knownSeries(extra ...string) map[string]bool {
	known := map[string]bool{}
	for _, m := range semconv.Metrics {
		for _, s := range MetricSeries(m) {
			known[s] = true
		}
	}
	for _, n := range append(slices.Clone(collectorOwnMetrics), extra...) {
		known[n] = true
	}
	return known
}
