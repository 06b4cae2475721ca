package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/views"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

const importUsage = `Usage:
  ortel import [flags] PROFILE.json...

Turns ONNX Runtime profile files — written by any ORT program (Python's
SessionOptions.enable_profiling, C++, C#, Go) — into OTLP spans: one trace per
model_run with each operator as a child span carrying its op type, provider,
shapes and sizes, plus spans for model loading and session initialization.
Operator durations also go to the onnxruntime.node.duration histogram.

ORT's profile clock starts at zero; the wall-clock start is read from ORT's
file name (prefix_YYYY-MM-DD_HH-MM-SS.json) or the file time, or given with
--start.

Flags:
  --model-name NAME   onnxruntime.model.name of the spans (default: "model")
  --provider NAME     execution provider the session asked for (default CPUExecutionProvider)
  --start TIME        wall-clock time of the profile's start, RFC 3339
  --out DIR           where OTLP/JSON files go when no endpoint is set (default ortel-out/import)
  --otlp-endpoint URL send OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT)
  --export-timeout D  give up on one OTLP export, and on a dead collector at exit,
                      after D (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)

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
	fs.StringVar(&model, "model-name", "model", "")
	deprecate(fs, "model", "--model-name NAME", false, func(v string) error { model = v; return nil })
	fs.StringVar(&provider, "provider", "CPUExecutionProvider", "")
	fs.StringVar(&start, "start", "", "")
	fs.StringVar(&out, "out", "ortel-out/import", "")
	fs.StringVar(&endpoint, "otlp-endpoint", "", "")
	var exportTimeout time.Duration
	fs.DurationVar(&exportTimeout, "export-timeout", 0, "")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	noteDeprecated(e, "import", fs)
	if err := checkExportTimeout(exportTimeout); err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("want at least one PROFILE.json")
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
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output folder %q: %w", out, err)
	}
	tel, err := startTelemetry(ctx, e, "import", telemetry.Config{
		ServiceName: "ortel", OutputDir: out, Endpoint: endpoint, ExportTimeout: exportTimeout, Views: views.FromEnv(),
	})
	if err != nil {
		return err
	}
	opts := []instrument.Option{
		instrument.WithModelName(model),
		instrument.WithExecutionProviders(provider),
		instrument.WithTracerProvider(tel.TracerProvider),
		instrument.WithMeterProvider(tel.MeterProvider),
	}
	var errs []error
	for _, p := range pos {
		st, err := instrument.ImportProfileFile(ctx, p, origin, opts...)
		fmt.Fprintf(e.stdout, "%s: %d runs, %d operator spans, %d other spans", p, st.Runs, st.Nodes, st.Other)
		if st.Dropped > 0 {
			fmt.Fprintf(e.stdout, ", %d node events outside every run (not emitted)", st.Dropped)
		}
		fmt.Fprintln(e.stdout)
		for _, w := range st.Warnings {
			fmt.Fprintf(e.stderr, "ortel import: %s: repaired at byte %d: %s\n", p, w.Offset, w.Msg)
		}
		if err != nil {
			// Spans already emitted from this file stay: they are flushed below.
			errs = append(errs, err)
		}
	}
	shutdownErr := stopTelemetry(ctx, tel)
	if shutdownErr != nil && len(errs) > 0 {
		errs = append(errs, fmt.Errorf("telemetry shutdown: %w", shutdownErr))
	}
	if tel.Resolved.Mode == "file" {
		for _, f := range tel.Files() {
			fmt.Fprintf(e.stdout, "wrote %s\n", f)
		}
	} else {
		fmt.Fprintf(e.stdout, "sent to %s\n", tel.Resolved.Traces.Where())
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return telemetryOutcome(e, "import", tel, shutdownErr)
}
