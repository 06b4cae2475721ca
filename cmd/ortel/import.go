package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/views"
	"github.com/ortel-dev/ortel/internal/profimport"
	"github.com/ortel-dev/ortel/internal/progress"
	"github.com/ortel-dev/ortel/internal/telemetry"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/semconv"
)

const importIntro = `Usage:
  ortel import [flags] PROFILE.json...

Turns ONNX Runtime profile files — written by any ORT program (Python's
SessionOptions.enable_profiling, C++, C#, Go) — into OTLP spans: one trace per
model_run with each operator as a child span carrying its op type, provider,
shapes, sizes and (ORT 1.25+) memory readings, plus spans for model loading
and session initialization. Nodes of If, Loop and Scan subgraphs are children
of the node that ran them. Operator self times (a node's time less its
subgraph's) go to the onnxruntime.node.duration histogram, run times to
onnxruntime.run.duration, and the arena's peak per run to
onnxruntime.run.memory.arena_peak.

Nothing is dropped: spans are written in bounded batches, each written to the
file (or acknowledged by the collector, with retries) before more of the
profile is read, and the counts printed are the counts written. Exit status 1
when a profile cannot be read whole, holds no run, has operators outside every
run, or the output fails; the counts say what was written before.

ORT's profile clock starts at zero; the wall-clock start is read from ORT's
file name (prefix_YYYY-MM-DD_HH-MM-SS.json, or ..._HH-MM-SS_mmm.json from ORT
1.25 on), else the file's modification time less the profile's length, or
given with --start.
`

const importOutro = `
Old spelling, still accepted with a notice: --model (now --model-name).

Examples:
  ortel import onnxruntime_profile__2026-11-22_10-31-07.json
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 ortel import --model-name det prof.json
`

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "turn ONNX Runtime profile JSON files into OTLP spans",
		intro:   importIntro,
		outro:   importOutro,
		args:    anyFile,
		new:     func() action { return new(importAction) },
	}
}

// importAction is one ortel import.
type importAction struct {
	model, provider, start string
	appendOut, overwrite   bool
	output                 outputFlags
	export                 exportFlags
	serviceName, format    string
	resource               listFlag
}

func (a *importAction) flags(fs *flagSet) {
	fs.stringFlag(&a.model, "model-name", "NAME", "model", `onnxruntime.model.name of the spans (default: "model")`)
	fs.deprecate("model", "--model-name NAME", false, func(v string) error { a.model = v; return nil })
	fs.stringFlag(&a.provider, "provider", "NAME", "CPUExecutionProvider",
		"execution provider the session asked for (default CPUExecutionProvider)")
	fs.stringFlag(&a.start, "start", "TIME", "", "wall-clock time of the profile's start, RFC 3339")
	a.output.register(fs, "import", 0)
	fs.boolFlag(&a.appendOut, "append", false,
		"add to the traces and metrics files already in --out (a folder already holding files is refused without --append or --overwrite)")
	fs.boolFlag(&a.overwrite, "overwrite", false, "replace the traces and metrics files in --out")
	fs.stringFlag(&a.serviceName, "service-name", "NAME", "",
		"service.name of the spans and metrics (default: OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES, else unknown_service)")
	fs.valueFlag(&a.resource, "resource", "KEY=VALUE",
		"resource attribute of the spans and metrics, over OTEL_RESOURCE_ATTRIBUTES and the profile's (repeatable)")
	fs.stringFlag(&a.format, "format", "F", "text", "text (default) or json: one result object on standard output")
	fs.choices("format", "text", "json")
	a.export.register(fs, exportAll)
}

// check reads the flags and the profiles' paths before anything is
// written; origin is --start, zero when not given.
func (a *importAction) check(pos []string) (origin time.Time, err error) {
	if err := a.export.validate(); err != nil {
		return origin, err
	}
	if len(pos) == 0 {
		return origin, usagef("want at least one PROFILE.json")
	}
	if a.appendOut && a.overwrite {
		return origin, usagef("--append and --overwrite exclude each other: pick one")
	}
	if a.format != "text" && a.format != "json" {
		return origin, usagef("--format %q: want text or json", a.format)
	}
	for _, kv := range a.resource {
		if _, err := profimport.ParseResourceAttr(kv); err != nil {
			return origin, usagef("--resource %v", err)
		}
	}
	if a.start != "" {
		if origin, err = time.Parse(time.RFC3339Nano, a.start); err != nil {
			return origin, usagef("--start %q is not an RFC 3339 time (like 2026-11-22T10:31:07Z)", a.start)
		}
	}
	for _, p := range pos {
		if st, err := os.Stat(p); err != nil {
			return origin, fmt.Errorf("read profile %q: %w", p, err)
		} else if st.IsDir() {
			return origin, fmt.Errorf("read profile %q: is a folder, not a file", p)
		}
	}
	return origin, nil
}

func (a *importAction) run(ctx context.Context, e *env, pos []string) error {
	origin, err := a.check(pos)
	if err != nil {
		return err
	}
	a.output.out = nextFreeOut(e, a.output.out, a.appendOut || a.overwrite)
	res, err := a.resourceOf(ctx, e, pos, origin)
	if err != nil {
		return err
	}
	cfg := a.output.telemetry("import", &a.export)
	cfg.Views = views.FromEnv()
	cfg.Resource = res
	resolved, err := telemetry.Resolve(cfg)
	if err != nil {
		return fmt.Errorf("set up telemetry: %w", err)
	}
	var created []string // output files this run creates: removed if nothing is written
	if resolved.Mode == telemetry.ModeFile {
		if created, err = prepareOut(a.output.out, resolved, a.appendOut, a.overwrite); err != nil {
			return err
		}
	}
	h, err := startHarness(ctx, e, "import", harnessConfig{telemetry: cfg})
	if err != nil {
		return err
	}
	defer h.close(ctx)
	sink, closeSink, err := openImportSink(ctx, e, h, resolved)
	if err != nil {
		h.stopTelemetry(ctx)
		removeAll(created)
		return fmt.Errorf("open the trace output: %w", err)
	}
	opts := profimport.Config{
		Model:         a.model,
		RunAttrs:      []attribute.KeyValue{semconv.OnnxruntimeExecutionProvidersKey.StringSlice([]string{a.provider})},
		MeterProvider: h.tel.MeterProvider,
	}
	result := importResult{Resource: resourceMap(res)}
	var errs []error
	for _, p := range pos {
		st, err := importFile(ctx, e, p, origin, sink, opts)
		result.add(p, st)
		if a.format == "text" {
			fmt.Fprintf(e.stdout, "%s: %d runs, %d of %d operator spans, %d other spans written\n", p, st.Runs, st.Nodes, st.NodeEvents, st.Other)
		}
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil || errors.Is(err, errSink) {
				break // the output failed: the other profiles would fail too
			}
		}
	}
	errs = append(errs, closeSink())
	h.stopTelemetry(ctx)
	outcome := h.outcome()
	if result.Spans == 0 {
		removeAll(created)
		errs = append(errs, errors.New("nothing was imported"))
	} else if resolved.Mode == telemetry.ModeFile {
		result.Output, result.TracesFile, result.MetricsFile = a.output.out, resolved.TracesFile(), resolved.MetricsFile()
	} else {
		result.Endpoint = h.tel.Resolved.Traces.Where()
	}
	err = errors.Join(append(errs, outcome)...)
	return errors.Join(result.print(e, a.format, err), err)
}

// openImportSink opens where the spans go: the traces file (crash
// consistent: each batch is one line written whole or not at all, and a
// cut line an earlier run left is repaired first), or the telemetry's own
// OTLP client (when the collector is dead, the metrics learn it from the
// spans and are spooled at exit without waiting a second export
// timeout). closeSink closes it and what it writes to.
func openImportSink(ctx context.Context, e *env, h *harness, resolved telemetry.Resolved) (sink profimport.Sink, closeSink func() error, err error) {
	scope := instrumentation.Scope{Name: instrument.ScopeName, Version: instrument.Version()}
	if resolved.Mode != telemetry.ModeFile {
		sink, err = profimport.NewClientSink(ctx, h.tel.TraceClient(), resolved.TracesEndpoint, h.tel.Resource(), scope)
		if err != nil {
			return nil, nil, err
		}
		return sink, sink.Close, nil
	}
	traceFile, rep, err := otlpjson.OpenAppender(resolved.TracesFile())
	if err != nil {
		return nil, nil, err
	}
	if r := rep.String(); r != "" {
		fmt.Fprintf(e.stderr, "ortel import: %s: %s\n", resolved.TracesFile(), r)
	}
	sink = profimport.NewFileSink(traceFile, resolved.TracesFile(), h.tel.Resource(), scope)
	return sink, func() error { return errors.Join(sink.Close(), traceFile.Close()) }, nil
}

// errSink marks a failure of the output, as opposed to one of the profile.
var errSink = errors.New("the output failed")

// importFile imports one profile and prints what it wrote.
func importFile(ctx context.Context, e *env, path string, origin time.Time, sink profimport.Sink, opts profimport.Config) (profimport.Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return profimport.Stats{}, fmt.Errorf("read profile %q: %w", path, err)
	}
	defer f.Close()
	opts.Origin = origin
	if origin.IsZero() {
		var from string
		opts.Origin, from = profimport.StartTime(path)
		fmt.Fprintf(e.stderr, "ortel import: %s: start %s, from %s (set --start to override)\n",
			path, opts.Origin.Format(time.RFC3339Nano), from)
	}
	bar := readingBar(e, f)
	st, err := profimport.Import(ctx, bar.Reader(f), sinkErr{sink}, opts)
	bar.Done()
	for _, w := range st.Warnings {
		fmt.Fprintf(e.stderr, "ortel import: %s: repaired at byte %d: %s\n", path, w.Offset, w.Msg)
	}
	if n := st.WarningCount - len(st.Warnings); n > 0 {
		fmt.Fprintf(e.stderr, "ortel import: %s: %d more repairs not shown\n", path, n)
	}
	for _, w := range st.Rejected {
		fmt.Fprintf(e.stderr, "ortel import: %s: rejected at byte %d: %s\n", path, w.Offset, w.Msg)
	}
	if n := st.RejectedCount - len(st.Rejected); n > 0 {
		fmt.Fprintf(e.stderr, "ortel import: %s: %d more events rejected, not shown\n", path, n)
	}
	if err != nil {
		return st, fmt.Errorf("import profile %q (%d spans written): %w", path, st.Spans(), err)
	}
	return st, nil
}

// sinkErr marks the sink's errors with errSink.
type sinkErr struct{ profimport.Sink }

func (s sinkErr) Write(ctx context.Context, b []profimport.Span) error {
	if err := s.Sink.Write(ctx, b); err != nil {
		return fmt.Errorf("%w: %w", errSink, err)
	}
	return nil
}

// prepareOut checks the output folder: one that holds anything is refused
// unless appendOut or overwrite; overwrite removes the traces and metrics
// files (nothing else). It returns the output files that do not exist yet.
func prepareOut(out string, r telemetry.Resolved, appendOut, overwrite bool) ([]string, error) {
	files := []string{r.TracesFile(), r.MetricsFile()}
	ents, err := os.ReadDir(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return append(files, out), nil // the folder last: removed once empty
	case err != nil:
		return nil, fmt.Errorf("output folder %q: %w", out, err)
	}
	if len(ents) > 0 && !appendOut && !overwrite {
		return nil, usagef("output folder %q is not empty (%s, ...): give --append to add to it or --overwrite to replace its traces and metrics files",
			out, ents[0].Name())
	}
	var created []string
	for _, f := range files {
		if overwrite {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("replace %s: %w", f, err)
			}
		}
		if _, err := os.Stat(f); errors.Is(err, os.ErrNotExist) {
			created = append(created, f)
		}
	}
	return created, nil
}

// removeAll removes the files (and folder) this run created, when it wrote
// no span: no empty output claims an import that did not happen.
func removeAll(files []string) {
	for _, f := range files {
		_ = os.Remove(f) // a folder only goes when empty
	}
}

// readingBar is the progress indicator of reading profile f: bytes read
// of its size (nil, drawing nothing, where stderr is not a terminal).
func readingBar(e *env, f *os.File) *progress.Bar {
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	return progress.Start(e.bars, "reading "+filepath.Base(f.Name()), size).InBytes()
}
