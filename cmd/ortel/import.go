package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/views"
	"github.com/ortel-dev/ortel/internal/profimport"
	"github.com/ortel-dev/ortel/internal/telemetry"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/semconv"
)

const importUsage = `Usage:
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

Flags:
  --model-name NAME   onnxruntime.model.name of the spans (default: "model")
  --provider NAME     execution provider the session asked for (default CPUExecutionProvider)
  --start TIME        wall-clock time of the profile's start, RFC 3339
  --out DIR           where OTLP/JSON files go when no endpoint is set (default ortel-out/import);
                      a folder already holding files is refused unless one of:
  --append            add to the traces and metrics files already in --out
  --overwrite         replace the traces and metrics files in --out
  --otlp-endpoint URL send OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT)
  --export-timeout D  give up on one OTLP export, and on a dead collector at exit,
                      after D (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)
` + spoolFlagsUsage + `
Old spelling, still accepted with a notice: --model (now --model-name).

Examples:
  ortel import onnxruntime_profile__2026-11-22_10-31-07.json
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 ortel import --model-name det prof.json
`

func importCommand() *command {
	return &command{
		name:    "import",
		summary: "turn ONNX Runtime profile JSON files into OTLP spans",
		usage:   importUsage,
		run:     runImport,
	}
}

func runImport(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var model, provider, start, out, endpoint string
	var appendOut, overwrite bool
	fs.StringVar(&model, "model-name", "model", "")
	deprecate(fs, "model", "--model-name NAME", false, func(v string) error { model = v; return nil })
	fs.StringVar(&provider, "provider", "CPUExecutionProvider", "")
	fs.StringVar(&start, "start", "", "")
	fs.StringVar(&out, "out", commandTelemetry("import").out, "")
	fs.StringVar(&endpoint, "otlp-endpoint", "", "")
	fs.BoolVar(&appendOut, "append", false, "")
	fs.BoolVar(&overwrite, "overwrite", false, "")
	var exportTimeout time.Duration
	fs.DurationVar(&exportTimeout, "export-timeout", 0, "")
	var sf spoolFlags
	sf.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	noteDeprecated(e, "import", fs)
	if err := checkExportTimeout(exportTimeout); err != nil {
		return err
	}
	if err := sf.validate(); err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want at least one PROFILE.json")
	}
	if appendOut && overwrite {
		return usagef("--append and --overwrite exclude each other: pick one")
	}
	var origin time.Time
	if start != "" {
		origin, err = time.Parse(time.RFC3339Nano, start)
		if err != nil {
			return usagef("--start %q is not an RFC 3339 time (like 2026-11-22T10:31:07Z)", start)
		}
	}
	for _, p := range pos {
		if st, err := os.Stat(p); err != nil {
			return fmt.Errorf("read profile %q: %w", p, err)
		} else if st.IsDir() {
			return fmt.Errorf("read profile %q: is a folder, not a file", p)
		}
	}
	cfg := telemetryConfig("import", out)
	cfg.Endpoint, cfg.ExportTimeout, cfg.Views, cfg.SpoolMaxBytes = endpoint, exportTimeout, views.FromEnv(), sf.maxBytes()
	resolved, err := telemetry.Resolve(cfg)
	if err != nil {
		return fmt.Errorf("set up telemetry: %w", err)
	}
	fileMode := resolved.Mode == telemetry.ModeFile
	var created []string // output files this run creates: removed if nothing is written
	if fileMode {
		if created, err = prepareOut(out, resolved, appendOut, overwrite); err != nil {
			return err
		}
	}
	tel, err := startTelemetry(ctx, e, "import", cfg)
	if err != nil {
		return err
	}
	scope := instrumentation.Scope{Name: instrument.ScopeName, Version: instrument.Version()}
	var (
		sink      profimport.Sink
		traceFile *otlpjson.Appender
	)
	if fileMode {
		// Crash-consistent: each batch is one line written whole or not at
		// all, and a cut line an earlier run left is repaired first.
		var rep otlpjson.Repair
		traceFile, rep, err = otlpjson.OpenAppender(resolved.TracesFile())
		if err == nil {
			if r := rep.String(); r != "" {
				fmt.Fprintf(e.stderr, "ortel import: %s: %s\n", resolved.TracesFile(), r)
			}
			sink = profimport.NewFileSink(traceFile, resolved.TracesFile(), tel.Resource(), scope)
		}
	} else {
		// The telemetry's own client: when the collector is dead, the
		// metrics learn it from the spans and are spooled at exit
		// without waiting a second export timeout.
		sink, err = profimport.NewClientSink(ctx, tel.TraceClient(), resolved.TracesEndpoint, tel.Resource(), scope)
	}
	if err != nil {
		_ = stopTelemetry(ctx, tel)
		removeAll(created)
		return fmt.Errorf("open the trace output: %w", err)
	}

	opts := profimport.Options{
		Model:         model,
		RunAttrs:      []attribute.KeyValue{semconv.OnnxruntimeExecutionProvidersKey.StringSlice([]string{provider})},
		MeterProvider: tel.MeterProvider,
	}
	var errs []error
	var total int64
	for _, p := range pos {
		st, err := importFile(ctx, e, p, origin, sink, opts)
		total += st.Spans()
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil || errors.Is(err, errSink) {
				break // the output failed: the other profiles would fail too
			}
		}
	}
	if err := sink.Close(); err != nil {
		errs = append(errs, err)
	}
	if traceFile != nil {
		if err := traceFile.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	shutdownErr := stopTelemetry(ctx, tel)
	outcome := telemetryOutcome(e, "import", tel, shutdownErr)
	if total == 0 {
		removeAll(created)
		errs = append(errs, errors.New("nothing was imported"))
		return errors.Join(append(errs, outcome)...)
	}
	if fileMode {
		fmt.Fprintf(e.stdout, "wrote %d spans to %s and the metrics to %s\n", total, resolved.TracesFile(), resolved.MetricsFile())
	} else {
		fmt.Fprintf(e.stdout, "sent %d spans to %s (each batch acknowledged)\n", total, tel.Resolved.Traces.Where())
	}
	return errors.Join(append(errs, outcome)...)
}

// errSink marks a failure of the output, as opposed to one of the profile.
var errSink = errors.New("the output failed")

// importFile imports one profile and prints what it wrote.
func importFile(ctx context.Context, e *env, path string, origin time.Time, sink profimport.Sink, opts profimport.Options) (profimport.Stats, error) {
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
	st, err := profimport.Import(ctx, f, sinkErr{sink}, opts)
	fmt.Fprintf(e.stdout, "%s: %d runs, %d of %d operator spans, %d other spans written\n",
		path, st.Runs, st.Nodes, st.NodeEvents, st.Other)
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
