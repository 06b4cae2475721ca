package stack

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/testenv"
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
