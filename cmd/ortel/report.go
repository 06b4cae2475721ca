package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ortel-dev/ortel/internal/atomicfile"
	"github.com/ortel-dev/ortel/internal/report"
)

const reportUsage = `Usage:
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

Flags:
  --format F           text, json, md (markdown), csv or html
                       (default: from --file's extension, else text)
  --file FILE          write to FILE instead of standard output
  --table T            CSV table: summary (default), samples, op-types, nodes, findings
  --reanalyze          recompute the analysis section
` + analysisFlagsUsage + `
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
		usage:   reportUsage,
		run:     runReport,
	}
}

// reportFormats maps --format values and file extensions to formats.
var reportFormats = map[string]string{
	"text": "text", "txt": "text", "json": "json", "md": "md", "markdown": "md",
	"csv": "csv", "html": "html", "htm": "html",
}

func runReport(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	var format, out, table string
	var reanalyze bool
	var af analysisFlags
	fs.StringVar(&format, "format", "", "")
	fs.StringVar(&out, "file", "", "")
	deprecate(fs, "out", "--file FILE", false, func(v string) error { out = v; return nil })
	fs.StringVar(&table, "table", report.CSVSummary, "")
	fs.BoolVar(&reanalyze, "reanalyze", false, "")
	af.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	noteDeprecated(e, "report", fs)
	if len(pos) != 1 {
		return usagef("want exactly one RUN.json, got %d arguments", len(pos))
	}
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
	opts, err := af.options(e.stderr)
	if err != nil {
		return err
	}

	rep, err := report.Read(pos[0])
	if err != nil {
		return err
	}
	if rep.Analysis == nil || reanalyze || af.set() {
		if err := analyzeReport(ctx, rep, opts); err != nil {
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
