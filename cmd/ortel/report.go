package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ortel-dev/ortel/internal/atomicfile"
	"github.com/ortel-dev/ortel/internal/report"
)

const reportIntro = `Usage:
  ortel report [flags] RUN.json

Renders a saved run (the report.json that ortel bench writes) in another
format: text, JSON, Markdown, CSV or a self-contained HTML page with charts
(latency histogram and CDF, operator timeline, op-type breakdown, roofline,
hardware time series, KV cache per generated token, energy, findings) that
works offline.

A report without an analysis section (roofline, findings, energy) gets one
computed; --reanalyze recomputes it, for instance with other peaks or
another grid intensity. The machine peaks come from the flags, the report,
or this machine's peak cache; they are measured here only when the run was
recorded on this machine.
`

const reportOutro = `
Old spelling, still accepted with a notice: --out (now --file; --out names
a folder in the other commands).

Examples:
  ortel report ortel-out/det-20261122-103107/report.json
  ortel report run.json --file run.html
  ortel report run.json --format csv --table nodes --file nodes.csv
  ortel report run.json --reanalyze --peak-flops 150G --peak-bw 20G --format md
`

func reportCommand() *command {
	return &command{
		name:    "report",
		summary: "render a saved run as text, JSON, Markdown, CSV or offline HTML",
		intro:   reportIntro,
		outro:   reportOutro,
		args:    anyFile,
		new:     func() action { return new(reportAction) },
	}
}

// reportAction is one ortel report.
type reportAction struct {
	format, file, table string
	reanalyze           bool
	analysis            analysisFlags
}

func (a *reportAction) flags(fs *flagSet) {
	fs.stringFlag(&a.format, "format", "F", "",
		"text, json, md (markdown), csv or html (default: from --file's extension, else text)")
	fs.stringFlag(&a.file, "file", "FILE", "", "write to FILE instead of standard output")
	fs.deprecate("out", "--file FILE", false, func(v string) error { a.file = v; return nil })
	fs.stringFlag(&a.table, "table", "T", report.CSVSummary,
		"CSV table: summary (default), samples, op-types, nodes, findings")
	fs.choices("format", "text", "json", "md", "csv", "html")
	fs.choices("table", report.CSVTables()...)
	fs.boolFlag(&a.reanalyze, "reanalyze", false, "recompute the analysis section")
	a.analysis.register(fs)
}

// reportFormats maps --format values and file extensions to formats.
var reportFormats = map[string]string{
	"text": "text", "txt": "text", "json": "json", "md": "md", "markdown": "md",
	"csv": "csv", "html": "html", "htm": "html",
}

func (a *reportAction) run(ctx context.Context, e *env, pos []string) error {
	if len(pos) != 1 {
		return usagef("want exactly one RUN.json, got %d arguments", len(pos))
	}
	format, out, table, reanalyze, af := a.format, a.file, a.table, a.reanalyze, &a.analysis
	if format == "" && out != "" {
		format = reportFormats[strings.TrimPrefix(strings.ToLower(filepath.Ext(out)), ".")]
	}
	if format == "" {
		format = "text"
	}
	f, ok := reportFormats[strings.ToLower(format)]
	if !ok {
		return usagef("--format %q: want text, json, md, csv or html", format)
	}
	if f == "csv" && !validTable(table) {
		return usagef("--table %q: want one of %s", table, strings.Join(report.CSVTables(), ", "))
	}
	acfg, err := af.config(e.stderr)
	if err != nil {
		return err
	}

	rep, err := report.Read(pos[0])
	if err != nil {
		return err
	}
	if rep.Analysis == nil || reanalyze || af.set() {
		if err := analyzeReport(ctx, rep, acfg); err != nil {
			return err
		}
	}

	var b bytes.Buffer
	switch f {
	case "text":
		if err = report.WriteText(&b, rep); err == nil {
			err = report.WriteAnalysisText(&b, rep)
		}
	case "json":
		var j []byte
		if j, err = json.MarshalIndent(rep, "", "  "); err == nil {
			b.Write(append(j, '\n'))
		}
	case "md":
		err = report.WriteMarkdown(&b, rep)
	case "csv":
		err = report.WriteCSV(&b, rep, table)
	case "html":
		err = report.WriteHTML(&b, rep)
	}
	if err != nil {
		return fmt.Errorf("render report %q as %s: %w", pos[0], f, err)
	}
	if out == "" {
		_, err = e.stdout.Write(b.Bytes())
		return err
	}
	if err := atomicfile.Write(out, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s report %q: %w", f, out, err)
	}
	fmt.Fprintf(e.stderr, "wrote %s\n", out)
	return nil
}

func validTable(t string) bool {
	for _, x := range report.CSVTables() {
		if x == t {
			return true
		}
	}
	return false
}
