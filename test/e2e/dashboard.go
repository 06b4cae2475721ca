package e2e

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/ortel-dev/ortel/test/stack"
)

// ExcusedPanels names the dashboard panels whose source some machines do
// not have, with what they need ("gpu" or "energy", as Hardware.Available
// reads it). The end-to-end test runs every other panel's queries and
// requires data; these it runs too, and excuses an empty answer only when
// the machine lacks what they need. A unit test checks that every metric an
// excused panel reads needs that hardware, so a panel cannot hide here.
var ExcusedPanels = map[string]string{
	"GPU utilization":      "gpu",
	"GPU memory used":      "gpu",
	"Power":                "energy",
	"Energy per inference": "energy",
}

// PanelQuery is one query of a dashboard panel.
type PanelQuery struct {
	Panel string // the panel's title
	RefID string // the query's refId within the panel
	Expr  string // PromQL with Grafana variables, as written
}

func (q PanelQuery) String() string { return fmt.Sprintf("panel %q query %s", q.Panel, q.RefID) }

// PanelQueries returns every PromQL query of the dashboard's panels, rows'
// collapsed panels included, in order.
func PanelQueries(d *stack.Dashboard) []PanelQuery {
	var out []PanelQuery
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			if strings.TrimSpace(t.Expr) != "" {
				out = append(out, PanelQuery{Panel: p.Title, RefID: t.RefID, Expr: t.Expr})
			}
		}
	}
	return out
}

// grafanaVarRe matches the three spellings of a Grafana variable:
// $name, ${name} or ${name:format}, and the deprecated [[name]].
var grafanaVarRe = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[^}]*)?\}|\$([A-Za-z0-9_]+)|\[\[([A-Za-z0-9_]+)(?::[^\]]*)?\]\]`)

// ExpandGrafana replaces the Grafana variables of a query with values. A
// variable without a value is an error naming it, so a dashboard edit that
// adds one is noticed rather than sent to Prometheus as text.
func ExpandGrafana(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := grafanaVarRe.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVarRe.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		v, ok := vars[name]
		if !ok {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("query %q: no value for the Grafana variable(s) %s", expr, strings.Join(missing, ", "))
	}
	return out, nil
}

// MultiValue formats the values of a multi-value variable the way Grafana
// does inside a regular-expression matcher (=~"$model"): each value
// escaped, joined as an alternation in parentheses.
func MultiValue(values []string) string {
	if len(values) == 1 {
		return regexp.QuoteMeta(values[0])
	}
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = regexp.QuoteMeta(v)
	}
	return "(" + strings.Join(q, "|") + ")"
}

// HasData reports whether a query answer holds at least one finite value:
// what a panel needs to draw something. NaN (a quantile over no
// observations, a ratio of zeros) and infinities do not count.
func HasData(samples []Sample) bool {
	for _, s := range samples {
		if !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) {
			return true
		}
	}
	return false
}

var labelValuesRe = regexp.MustCompile(`^\s*label_values\(\s*(.+?)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)

// LabelValuesQuery splits a query variable's label_values(selector, label)
// into its selector and label; ok is false for any other form.
func LabelValuesQuery(text string) (selector, label string, ok bool) {
	m := labelValuesRe.FindStringSubmatch(text)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Variables returns the dashboard's query variables by name, each with its
// query text.
func Variables(d *stack.Dashboard) (map[string]string, error) {
	qs, err := d.Queries()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, q := range qs {
		if name, ok := strings.CutPrefix(q.Where, "variable "); ok {
			out[name] = q.Expr
		}
	}
	return out, nil
}
