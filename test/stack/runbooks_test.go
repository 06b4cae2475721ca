package stack

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

// runbookParts are the subsections every runbook section has, in order.
var runbookParts = []string{"### What it means", "### How to check", "### What to do"}

// TestEveryAlertHasARunbook: each alert's runbook_url is its section of
// docs/runbooks.md, that section exists with the three parts, and the file
// has no section for an alert the rules lack.
func TestEveryAlertHasARunbook(t *testing.T) {
	root := repoRoot(t)
	var rules RuleGroups
	if err := LoadYAML(filepath.Join(root, RulesFile), &rules); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, RunbooksFile))
	if err != nil {
		t.Fatal(err)
	}
	sections := runbookSections(string(md))
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts = append(alerts, r.Alert)
			if got, want := r.Annotations["runbook_url"], RunbookURL(r.Alert); got != want {
				t.Errorf("alert %s: runbook_url %q, want %q", r.Alert, got, want)
			}
			body, ok := sections[r.Alert]
			if !ok {
				t.Errorf("alert %s has no section \"## %s\" in %s", r.Alert, r.Alert, RunbooksFile)
				continue
			}
			at := 0
			for _, part := range runbookParts {
				i := strings.Index(body[at:], part+"\n")
				if i < 0 {
					t.Errorf("%s, section %s: no %q after the previous part", RunbooksFile, r.Alert, part)
					break
				}
				at += i + len(part)
			}
		}
	}
	for name := range sections {
		if !slices.Contains(alerts, name) {
			t.Errorf("%s has a section %q, but %s defines no such alert", RunbooksFile, name, RulesFile)
		}
	}
}

// runbookSections maps each "## NAME" heading of a runbooks file to the
// text under it, up to the next "## " heading.
func runbookSections(md string) map[string]string {
	out := map[string]string{}
	name := ""
	var body []string
	flush := func() {
		if name != "" {
			out[name] = strings.Join(body, "\n") + "\n"
		}
	}
	for _, l := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			flush()
			name, body = strings.TrimSpace(h), nil
			continue
		}
		body = append(body, l)
	}
	flush()
	return out
}

var runbookSeriesRe = regexp.MustCompile(`\b(?:onnxruntime|ortel|system|process|hw|nvidia|otelcol)_[a-z0-9_]+`)

// TestRunbookSeriesExist: every series a runbook names is a registered
// metric's Prometheus name or one of the collector's own counters, and
// every such label a registered attribute's, so a runbook query selects
// something.
func TestRunbookSeriesExist(t *testing.T) {
	root := repoRoot(t)
	md, err := os.ReadFile(filepath.Join(root, RunbooksFile))
	if err != nil {
		t.Fatal(err)
	}
	known := knownSeries("otelcol_receiver_accepted_spans", "otelcol_receiver_accepted_metric_points")
	for _, a := range semconv.Attributes {
		known[LabelName(a.Key)] = true
	}
	for _, name := range runbookSeriesRe.FindAllString(string(md), -1) {
		if strings.HasSuffix(name, "_") { // "otelcol_exporter_send_failed_*"
			continue
		}
		if !known[name] {
			t.Errorf("%s names %s, which is no registered metric's Prometheus name, attribute's label or collector counter", RunbooksFile, name)
		}
	}
}

func TestRunbookSections(t *testing.T) {
	got := runbookSections("# T\nintro\n## A\n### x\ntext\n## B\n")
	if len(got) != 2 || got["A"] != "### x\ntext\n" || got["B"] != "\n" {
		t.Errorf("runbookSections = %q", got)
	}
}
