package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/atomicfile"
	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/profreport"
	"github.com/ortel-dev/ortel/internal/report"
)

const reportIntro = `Usage:
  ortel report [flags] RUN.json
  ortel report [flags] PROFILE.json...

Renders a saved run (the report.json that ortel bench writes) in another
format: text, JSON, Markdown, CSV or a self-contained HTML page with charts
(latency histogram and CDF, operator timeline, op-type breakdown, roofline,
hardware time series, KV cache per generated token, energy, findings) that
works offline.

An ONNX Runtime profile — the JSON that enable_profiling writes in Python,
C#, C++, Java or Node.js, or the per-run files of run-level profiling (ORT
1.25+; give them all) — gets the same analysis: top operators by self time,
memory arena, the last run's timeline, findings. Its latency is the profiled
runs' durations (profiler overhead included); a profile has no unprofiled
latency or throughput. With --model FILE.onnx the report describes the
model, and the profile is taken as run on this machine: the roofline uses
this machine's peaks. --save DIR writes report.json, report.md and
report.html as bench does. Profile or report is told by content, not name.

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
  ortel report onnxruntime_profile__2026-11-22_10-31-07.json --model det.onnx --save prof-report
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
	// For profiles.
	model, modelName, save string
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
	fs.stringFlag(&a.model, "model", "FILE", "",
		"for a profile: the ONNX model it ran, taken as run on this machine (model facts, this machine's roofline)")
	fs.stringFlag(&a.modelName, "model-name", "NAME", "", "for a profile: the model's name (default: --model's, else the profile's file name)")
	fs.stringFlag(&a.save, "save", "DIR", "", "also write report.json, report.md and report.html into DIR, as bench does")
}

// reportFormats maps --format values and file extensions to formats.
var reportFormats = map[string]string{
	"text": "text", "txt": "text", "json": "json", "md": "md", "markdown": "md",
	"csv": "csv", "html": "html", "htm": "html",
}

func (a *reportAction) run(ctx context.Context, e *env, pos []string) error {
	if len(pos) == 0 {
		return usagef("want a RUN.json or one or more PROFILE.json files")
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

	rep, err := a.read(ctx, e, pos)
	if err != nil {
		return err
	}
	if rep.Analysis == nil || reanalyze || af.set() {
		if err := analyzeReport(ctx, rep, acfg); err != nil {
			return err
		}
	}

	if a.save != "" {
		if err := a.saveAll(e, rep); err != nil {
			return err
		}
		if a.format == "" && out == "" {
			return nil
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

// read reads the run or profiles named by pos, told apart by content: one
// report.json, or one or more ONNX Runtime profiles (turned into a report).
func (a *reportAction) read(ctx context.Context, e *env, pos []string) (*report.Report, error) {
	kinds := make([]profreport.Kind, len(pos))
	for i, p := range pos {
		k, err := profreport.SniffFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", p, err)
		}
		if k == profreport.KindUnknown {
			return nil, fmt.Errorf("read %q: neither a report.json from ortel bench (a JSON object starting with \"schema_version\") nor an ONNX Runtime profile (a JSON array of trace events)", p)
		}
		kinds[i] = k
	}
	if kinds[0] == profreport.KindReport {
		if len(pos) > 1 {
			return nil, usagef("%q is a report.json: give one report, or only profiles", pos[0])
		}
		if a.model != "" || a.modelName != "" {
			return nil, usagef("--model and --model-name are for profiles; %q is a report.json", pos[0])
		}
		return report.Read(pos[0])
	}
	for i, k := range kinds {
		if k != profreport.KindProfile {
			return nil, usagef("%q is a report.json, %q a profile: give one report, or only profiles", pos[i], pos[0])
		}
	}
	name := a.modelName
	if name == "" && a.model != "" {
		name = instrument.ModelName(a.model)
	}
	rep, err := profreport.Build(ctx, pos, profreport.Config{ModelName: name})
	if err != nil {
		return nil, err
	}
	rep.Tool = report.Tool{Name: "ortel", Version: version}
	if a.model == "" {
		return rep, nil
	}
	lib, err := ortlib.Init()
	if err != nil {
		return nil, fmt.Errorf("--model %q: reading the model needs ONNX Runtime: %w", a.model, err)
	}
	m, err := bench.DescribeModel(a.model)
	if err != nil {
		return nil, err
	}
	m.Name = rep.Model.Name
	rep.Model = m
	rep.Runtime.LibraryPath = lib
	profreport.AssumeHere(rep, bench.HostInfo(), ort.GetVersion())
	return rep, nil
}

// saveAll writes report.json, report.md and report.html into a.save, as
// bench does, and prints the summary and where they are.
func (a *reportAction) saveAll(e *env, rep *report.Report) error {
	if err := os.MkdirAll(a.save, 0o755); err != nil {
		return fmt.Errorf("--save %q: %w", a.save, err)
	}
	if err := errors.Join(rep.Write(filepath.Join(a.save, "report.json")), writeRenderedReports(rep, a.save)); err != nil {
		return err
	}
	if a.format == "" && a.file == "" {
		if err := report.WriteSummary(e.stdout, rep); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "report      %s (and report.md, report.json)\n", filepath.Join(a.save, "report.html"))
		return nil
	}
	fmt.Fprintf(e.stderr, "wrote %s (and report.md, report.json)\n", filepath.Join(a.save, "report.html"))
	return nil
}
