package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

const attachUsage = `Usage:
  ortel attach --pid PID [--pid PID ...] [flags]
  ortel attach --lib PATH [flags]

Instruments a running process that uses ONNX Runtime, without changing it:
eBPF uprobes on ONNX Runtime's C API (Run, RunWithBinding, CreateSession,
ReleaseSession) turn every run into a run span and the metrics the in-process
instrumentation records (onnxruntime.run.duration, onnxruntime.runs,
onnxruntime.run.errors, onnxruntime.run.active,
onnxruntime.session.creation.duration). Runs carry the model name when the
session was created after attach (it comes from CreateSession's path), and a
session identity always. Works for Node.js, C, C++, C#, Java, Rust and Go
clients; not for Python (its binding bypasses the C API).

Needs Linux with uprobes, and root or CAP_BPF+CAP_PERFMON (see ortel doctor).
Stops on Ctrl-C, after --duration, or when every --pid process has exited;
the probes are removed in every case.

Flags:
  --pid N             a process to attach to (repeatable); it must have
                      ONNX Runtime loaded
  --lib PATH          attach to every process, running or started later, that
                      loads this ONNX Runtime library file
  --duration D        stop after this long (default: until interrupted)
  --out DIR           where OTLP/JSON files go when no endpoint is set
                      (default ortel-out/attach)
  --rotate-mb N       start a new OTLP/JSON file when one reaches N MiB; 0 never
                      rotates (default 64)
  --rotate-keep N     rotated files kept per signal, the newest (default 4)
  --otlp-endpoint URL send OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT)
  --export-timeout D  give up on one OTLP export, and on a dead collector at exit,
                      after D (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)
  --quiet             no status lines on stderr
` + uiFlagsUsage + `

Examples:
  sudo ortel attach --pid $(pgrep -f server.js)
  sudo ortel attach --lib node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1 --duration 1m
`

func attachCommand() *command {
	return &command{
		name:    "attach",
		summary: "instrument a running ONNX Runtime process through eBPF uprobes, no code change",
		usage:   attachUsage,
		run:     runAttach,
	}
}

func runAttach(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("attach", flag.ContinueOnError)
	var pidFlags listFlag
	var lib, out, endpoint string
	var duration time.Duration
	var quiet bool
	fs.Var(&pidFlags, "pid", "")
	fs.StringVar(&lib, "lib", "", "")
	fs.DurationVar(&duration, "duration", 0, "")
	fs.StringVar(&out, "out", commandTelemetry("attach").out, "")
	fs.StringVar(&endpoint, "otlp-endpoint", "", "")
	fs.BoolVar(&quiet, "quiet", false, "")
	var xf exportFlags
	xf.register(fs)
	var uf uiFlags
	uf.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("attach takes no arguments, got %q (use --pid or --lib)", pos[0])
	}
	if len(pidFlags) == 0 && lib == "" {
		return usagef("say what to attach to: --pid PID (repeatable) or --lib PATH")
	}
	if len(pidFlags) > 0 && lib != "" {
		return usagef("use --pid or --lib, not both (a process would be probed twice)")
	}
	if duration < 0 {
		return usagef("--duration must not be negative (got %s)", duration)
	}
	if err := xf.validate(); err != nil {
		return err
	}
	if err := uf.validate(); err != nil {
		return err
	}
	pids, err := parsePIDs(pidFlags)
	if err != nil {
		return err
	}

	// Refusals come before any output file is created.
	if st := attach.Check(); !st.Available {
		return fmt.Errorf("eBPF uprobes cannot be used here: %s", st.Reason)
	}
	for _, pid := range pids {
		if _, err := attach.FindTarget(pid); err != nil {
			return err
		}
	}
	if lib != "" {
		if _, err := attach.Resolve(lib); err != nil {
			return err
		}
	}
	ui := uf.newUI()
	cfg := telemetryConfig("attach", out)
	cfg.Endpoint, cfg.ExportTimeout, cfg.Rotation, cfg.Readers = endpoint, xf.timeout, xf.rotation(), ui.readers()
	tel, err := startTelemetry(ctx, e, "attach", cfg)
	if err != nil {
		return err
	}
	if err := ui.start(ctx, e, "attach", uf); err != nil {
		return errors.Join(err, stopTelemetry(ctx, tel))
	}
	defer ui.stop()
	opts := []attach.Option{attach.WithTracerProvider(tel.TracerProvider), attach.WithMeterProvider(tel.MeterProvider)}
	if len(pids) > 0 {
		opts = append(opts, attach.WithPIDs(pids...))
	}
	if lib != "" {
		opts = append(opts, attach.WithLibrary(lib))
	}
	tr, err := attach.Start(opts...)
	if err != nil {
		return errors.Join(err, stopTelemetry(ctx, tel))
	}
	if !quiet {
		for _, tg := range tr.Targets() {
			for _, l := range tg.Libraries {
				fmt.Fprintf(e.stderr, "ortel attach: process %d (%s) uses %s\n", tg.PID, tg.Exe, l.Path)
			}
		}
		for _, o := range tr.Libraries() {
			fmt.Fprintf(e.stderr, "ortel attach: probes on ONNX Runtime %s (build id %s): Run, RunWithBinding, CreateSession, CreateSessionFromArray, ReleaseSession\n", o.Version, shortID(o.BuildID))
		}
		if tel.Resolved.Mode == telemetry.ModeFile {
			fmt.Fprintf(e.stderr, "ortel attach: no OTLP endpoint set; writing %s\n", strings.Join(tel.Files(), ", "))
		} else {
			fmt.Fprintf(e.stderr, "ortel attach: exporting traces to %s\n", tel.Resolved.Traces.Where())
		}
	}
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	started := time.Now()
	reason, runErr := tr.Run(ctx)
	closeErr := tr.Close() // detach before the export's flush: no probe outlives a slow collector
	shutdownErr := stopTelemetry(ctx, tel)
	if !quiet {
		st := tr.Stats()
		why := "interrupted"
		switch {
		case reason == attach.TargetsExited:
			why = "the target processes exited"
		case duration > 0 && ctx.Err() == context.DeadlineExceeded:
			why = "--duration reached"
		}
		sessions := "sessions"
		if st.Sessions == 1 {
			sessions = "session"
		}
		fmt.Fprintf(e.stderr, "ortel attach: detached after %s (%s): %d runs (%d failed), %d %s created\n",
			time.Since(started).Round(time.Millisecond), why, st.Runs, st.Errors, st.Sessions, sessions)
		if st.Lost > 0 {
			fmt.Fprintf(e.stderr, "ortel attach: warning: %d runs lost: the probes' ring buffer was full (ortel fell behind the target)\n", st.Lost)
		}
		if st.Bad > 0 {
			fmt.Fprintf(e.stderr, "ortel attach: %d malformed probe events dropped\n", st.Bad)
		}
	}
	if err := errors.Join(runErr, closeErr); err != nil {
		if shutdownErr != nil {
			err = errors.Join(err, fmt.Errorf("telemetry shutdown: %w", shutdownErr))
		}
		return err
	}
	return telemetryOutcome(e, "attach", tel, shutdownErr)
}

// shortID shortens a build id for display.
func shortID(id string) string {
	if id == "" {
		return "none"
	}
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
