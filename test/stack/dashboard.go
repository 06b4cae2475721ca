package stack

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Dashboard is the part of a Grafana dashboard JSON that the checks read.
type Dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []Variable `json:"list"`
	} `json:"templating"`
	Links []Link `json:"links"`
}

// Link is one of the dashboard's links.
type Link struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Panel is one dashboard panel; a row panel holds collapsed panels.
type Panel struct {
	ID         int        `json:"id"`
	Title      string     `json:"title"`
	Type       string     `json:"type"`
	Datasource Datasource `json:"datasource"`
	Targets    []Target   `json:"targets"`
	Panels     []Panel    `json:"panels"`
}

// Target is one query of a panel.
type Target struct {
	RefID      string     `json:"refId"`
	Expr       string     `json:"expr"`
	Datasource Datasource `json:"datasource"`
}

// Datasource names a provisioned data source by type and uid.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Variable is a templating variable; Query is a string or an object with a
// "query" field, depending on the Grafana version that saved it.
type Variable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Datasource Datasource      `json:"datasource"`
	Query      json.RawMessage `json:"query"`
}

// DashboardQuery is one PromQL expression of a dashboard and where it is.
type DashboardQuery struct {
	Where string // "panel \"Run latency\" query A" or "variable model"
	Expr  string
	Query Query
}

// LoadDashboard reads a Grafana dashboard JSON file.
func LoadDashboard(path string) (*Dashboard, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	var d Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("parse dashboard %q: %w", path, err)
	}
	return &d, nil
}

// AllPanels returns every panel, rows' collapsed panels included, in order.
func (d *Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

var labelValuesRe = regexp.MustCompile(`^\s*label_values\(\s*(?:(.*?)\s*,\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*$`)
var queryResultRe = regexp.MustCompile(`^\s*query_result\((.*)\)\s*$`)

// Queries returns every PromQL expression of the dashboard: panel targets,
// and the queries of query variables (label_values(metric, label) and
// query_result(expr) forms included), each parsed.
func (d *Dashboard) Queries() ([]DashboardQuery, error) {
	var out []DashboardQuery
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			if t.Expr == "" {
				continue
			}
			where := fmt.Sprintf("panel %q query %s", p.Title, t.RefID)
			q, err := ParseQuery(t.Expr)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			out = append(out, DashboardQuery{Where: where, Expr: t.Expr, Query: q})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		text, err := variableQuery(v.Query)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		where := "variable " + v.Name
		var q Query
		switch m := labelValuesRe.FindStringSubmatch(text); {
		case m != nil:
			if m[1] != "" {
				if q, err = ParseQuery(m[1]); err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
			}
			q.Labels = sortedKeys(setOf(append(q.Labels, m[2])))
		case queryResultRe.MatchString(text):
			if q, err = ParseQuery(queryResultRe.FindStringSubmatch(text)[1]); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		default:
			if q, err = ParseQuery(text); err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
		}
		out = append(out, DashboardQuery{Where: where, Expr: text, Query: q})
	}
	return out, nil
}

// MetricNames returns every metric name the dashboard's queries select,
// sorted and distinct.
func (d *Dashboard) MetricNames() ([]string, error) {
	qs, err := d.Queries()
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, q := range qs {
		for _, m := range q.Query.Metrics {
			set[m] = true
		}
	}
	return sortedKeys(set), nil
}

func variableQuery(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var obj struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("query is neither a string nor an object with a query field: %w", err)
	}
	return strings.TrimSpace(obj.Query), nil
}

func setOf(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
