package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/ortel-dev/ortel/internal/units"
)

// The HTML report's template, stylesheet and chart code are embedded, and
// inlined into every page: the page needs no network and no other file.
//
//go:embed html/report.html.tmpl html/generation.html.tmpl html/series.html.tmpl html/report.css html/report.js
var htmlFS embed.FS

var htmlTmpl = template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
	"dur":      units.Duration,
	"pdur":     pdur,
	"rate":     units.Rate,
	"optRate":  optRate,
	"optNum":   optNum,
	"optPct":   optPct,
	"pct":      func(v float64) string { return units.Percent(v, 1) },
	"joules":   units.Energy,
	"short":    shortProvider,
	"join":     strings.Join,
	"evidence": evidenceLine,
	"deref":    func(p *float64) float64 { return *p },
	"bytes":    func(n uint64) string { return units.Bytes(int64(n)) },
	"ibytes":   units.Bytes,
	"pname":    providerName,
	"dir":      direction,
	"copyRate": copyRate,
	"plural":   Plural,
	// roofline levels (roofline_text.go)
	"aboveRoof":   aboveRoof,
	"aboveGroups": aboveGroups,
	"roofName":    roofName,
	"threads":     threadsLabel,
	"size":        func(n any) string { return sizeText(n) },
	"sets":        setsText,
	// generation (generation_render.go)
	"genView":  newGenView,
	"interval": IntervalText,
	"inc":      func(i int) int { return i + 1 },

	"shareBasis": ShareBasis,
	// A/B (ab.go)
	"abview":  func(id, title string, ab *AB) abView { return abView{ID: id, Title: title, AB: ab} },
	"abstat":  ABStatText,
	"abvalue": abValue,
}).ParseFS(htmlFS, "html/report.html.tmpl", "html/generation.html.tmpl"))

// htmlView is what the template sees.
type htmlView struct {
	R    *Report
	Data template.JS
	CSS  template.CSS
	JS   template.JS
	KPIs []kpi
	// Sub is the line under the title; Cold the sentence under the
	// latency table, set for a profile (the bench one is in the template).
	Sub, Cold, LatencyHeading string
}

// abView is an A/B section as the template's "ab" block sees it.
type abView struct {
	ID, Title string
	AB        *AB
}

type kpi struct{ Label, Value string }

// pageAssets are the stylesheet and chart code every HTML page embeds.
func pageAssets() (template.CSS, template.JS, error) {
	css, err := htmlFS.ReadFile("html/report.css")
	if err != nil {
		return "", "", err
	}
	js, err := htmlFS.ReadFile("html/report.js")
	if err != nil {
		return "", "", err
	}
	return template.CSS(css), template.JS(js), nil
}

// WriteHTML renders the report as one self-contained HTML page: the report
// JSON, the stylesheet and the chart code (SVG drawn by embedded
// JavaScript: latency histogram and CDF, warm-up curve, operator timeline,
// op-type breakdown, roofline, hardware time series, batch sweep, KV cache
// per generated token) are inlined, so the page works offline and loads
// nothing from any network.
func WriteHTML(w io.Writer, r *Report) error {
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	// json.Marshal escapes <, > and &, so no string in the report can close
	// the script element it is embedded in.
	css, js, err := pageAssets()
	if err != nil {
		return err
	}
	v := htmlView{R: r, Data: template.JS(data), CSS: css, JS: js, KPIs: kpis(r), Sub: subtitle(r), LatencyHeading: "Latency"}
	if r.FromProfile() {
		v.Cold, v.LatencyHeading = profileColdText(r), latencyHeading(r)
	}
	var b bytes.Buffer
	if err := htmlTmpl.Execute(&b, v); err != nil {
		return fmt.Errorf("render HTML report: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

func kpis(r *Report) []kpi {
	out := []kpi{
		{"p50 latency", units.Duration(r.Latency.P50)},
		{"p99 latency", pdur(r.Latency.Summary, 99, r.Latency.P99)},
		{"throughput", fmt.Sprintf("%.1f items/s", r.Throughput.ItemsPerS)},
		{"session creation", units.Duration(r.Session.CreationS)},
	}
	if r.FromProfile() {
		out = []kpi{
			{"p50 of profiled runs", units.Duration(r.Latency.P50)},
			{"profiled runs", fmt.Sprint(r.Latency.Count)},
		}
		if r.Session.CreationS > 0 {
			out = append(out, kpi{"session creation", units.Duration(r.Session.CreationS)})
		}
	}
	out = append(out, generationKPIs(r)...)
	if a := r.Analysis; a != nil {
		if a.Energy.Available {
			out = append(out, kpi{"energy per inference", units.Energy(a.Energy.JoulesPerInference)})
		} else {
			out = append(out, kpi{"energy per inference", "unavailable"})
		}
		if len(a.Findings) > 0 {
			out = append(out, kpi{"findings (top: " + a.Findings[0].Rule + ")", fmt.Sprint(len(a.Findings))})
		}
	}
	return out
}
