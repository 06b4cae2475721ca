package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
)

// SeriesPage is a page of time series (one value per run, with its
// interval) and their change points: what ortel history show draws. It is
// rendered by WriteSeriesHTML with the report's stylesheet and chart code.
type SeriesPage struct {
	Title, Subtitle string
	// Generator names the program, e.g. "ortel 0.1.0".
	Generator string
	Sections  []SeriesSection
}

// SeriesSection is one series: a heading, notes, a chart and tables.
type SeriesSection struct {
	Heading string
	Notes   []string
	Chart   *SeriesChart
	Tables  []Table
}

// Table is a plain table; its first two columns are left-aligned.
type Table struct {
	Caption string
	Header  []string
	Rows    [][]string
}

// SeriesChart is the data of one series chart.
type SeriesChart struct {
	Caption string `json:"caption"`
	// Unit of the values: "s", "By", "J", "1/s" (as units.Value reads them).
	Unit   string        `json:"unit"`
	Points []SeriesPoint `json:"points"`
	// Levels are the series' level between change points, drawn as lines.
	Levels  []SeriesLevel  `json:"levels,omitempty"`
	Changes []SeriesChange `json:"changes,omitempty"`
}

// SeriesPoint is one run's value with its interval.
type SeriesPoint struct {
	// Label names the run in the point's tooltip.
	Label string   `json:"label"`
	V     float64  `json:"v"`
	Lower *float64 `json:"lo,omitempty"`
	Upper *float64 `json:"hi,omitempty"`
	// Candidate: a run checked, not recorded; drawn hollow.
	Candidate bool `json:"candidate,omitempty"`
}

// SeriesLevel is the series' level over points From..To-1.
type SeriesLevel struct {
	From  int     `json:"from"`
	To    int     `json:"to"`
	Level float64 `json:"level"`
}

// SeriesChange marks a change point before point Index.
type SeriesChange struct {
	Index int    `json:"index"`
	Label string `json:"label"`
	Worse bool   `json:"worse"`
}

// WriteSeriesHTML renders p as one self-contained HTML page: the data, the
// stylesheet and the chart code are inlined, nothing is loaded from any
// network.
func WriteSeriesHTML(w io.Writer, p SeriesPage) error {
	var charts []*SeriesChart
	for _, s := range p.Sections {
		charts = append(charts, s.Chart)
	}
	data, err := json.Marshal(struct {
		Charts []*SeriesChart `json:"charts"`
	}{charts})
	if err != nil {
		return fmt.Errorf("encode series page: %w", err)
	}
	css, js, err := pageAssets()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	err = seriesTmpl.Execute(&b, struct {
		P    SeriesPage
		Data template.JS
		CSS  template.CSS
		JS   template.JS
	}{p, template.JS(data), css, js})
	if err != nil {
		return fmt.Errorf("render series page: %w", err)
	}
	_, err = w.Write(b.Bytes())
	return err
}

var seriesTmpl = template.Must(template.New("series.html.tmpl").ParseFS(htmlFS, "html/series.html.tmpl"))
