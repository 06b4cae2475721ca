package stack

import (
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Paths of the Prometheus rules, relative to the repository root.
const (
	RulesFile     = "otelcol-config/rules/ortel.yaml"
	RuleTestsFile = "otelcol-config/rules/tests/ortel_test.yaml"
	// RunbooksFile holds one section per alert, which the alert's
	// runbook_url annotation links (RunbookURL).
	RunbooksFile = "docs/runbooks.md"
)

// RunbookURL is the runbook_url an alert carries: its section of
// RunbooksFile on the repository's main branch (GitHub's anchor of a
// heading made of letters is the heading in lower case).
func RunbookURL(alert string) string {
	return "https://github.com/ortel-dev/ortel/blob/main/" + RunbooksFile + "#" + strings.ToLower(alert)
}

// RuleGroups is a Prometheus rules file: groups of recording and alerting
// rules.
type RuleGroups struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// Alerts returns the names of the alerting rules, in order.
func (g *RuleGroups) Alerts() []string {
	var out []string
	for _, gr := range g.Groups {
		for _, r := range gr.Rules {
			if r.Alert != "" {
				out = append(out, r.Alert)
			}
		}
	}
	return out
}

// RuleTests is a promtool unit-test file, the parts the checks read.
type RuleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name       string `yaml:"name"`
		AlertTests []struct {
			Alert     string           `yaml:"alertname"`
			ExpAlerts []map[string]any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// LoadYAML decodes a YAML file into v, naming the file in errors.
func LoadYAML(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}
