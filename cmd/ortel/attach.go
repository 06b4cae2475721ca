package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

const attachIntro = `Usage:
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
`

const attachOutro = `
Examples:
  sudo ortel attach --pid $(pgrep -f server.js)
  sudo ortel attach --lib node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1 --duration 1m
`

func attachCommand() *command {
	return &command{
		name:    "attach",
		summary: "instrument a running ONNX Runtime process through eBPF uprobes, no code change",
		intro:   attachIntro,
		outro:   attachOutro,
		args:    noArgs,
		new:     func() action { return new(attachAction) },
	}
}

// attachAction is one ortel attach.
type attachAction struct {
	pids     listFlag
	lib      string
	duration time.Duration
	format   string
	output   outputFlags
	export   exportFlags
	ui       uiFlags
}

func (a *attachAction) flags(fs *flagSet) {
	fs.valueFlag(&a.pids, "pid", "N", "a process to attach to (repeatable); it must have ONNX Runtime loaded")
	fs.stringFlag(&a.lib, "lib", "PATH", "",
		"attach to every process, running or started later, that loads this ONNX Runtime library file")
	fs.durationFlag(&a.duration, "duration", "D", 0, "stop after this long (default: until interrupted)")
	a.output.register(fs, "attach", outputRotate|outputQuiet)
	a.export.register(fs, exportAll|exportOff)
	a.ui.register(fs)
	registerTextOrJSON(fs, &a.format, "what the probes saw, printed on stdout when attach detaches")
}

// config is the tracer's Config the flags give, checked by the engine
// (attach.Config.Validate): a rule it breaks is a usage error.
func (a *attachAction) config() (attach.Config, error) {
	for _, v := range []func() error{a.output.validate, a.export.validate, a.ui.validate, func() error { return checkTextOrJSON(a.format) }} {
		if err := v(); err != nil {
			return attach.Config{}, err
		}
	}
	if a.duration < 0 {
		return attach.Config{}, usagef("--duration must not be negative (got %s)", a.duration)
	}
	pids, err := parsePIDs(a.pids)
	if err != nil {
		return attach.Config{}, err
	}
	cfg := attach.Config{PIDs: pids, Library: a.lib}
	return cfg, usage(cfg.Validate())
}

func (a *attachAction) run(ctx context.Context, e *env, pos []string) error {
	if len(pos) > 0 {
		return usagef("attach takes no arguments, got %q (use --pid or --lib)", pos[0])
	}
	cfg, err := a.config()
	if err != nil {
		return err
	}
	// Refusals come before any output file is created.
	if err := a.checkTargets(); err != nil {
		return err
	}
	h, err := startHarness(ctx, e, "attach", harnessConfig{telemetry: a.output.telemetry("attach", &a.export), ui: &a.ui})
	if err != nil {
		return err
	}
	defer h.close(ctx)
	cfg.TracerProvider, cfg.MeterProvider = h.tel.TracerProvider, h.tel.MeterProvider
	tr, err := attach.Start(cfg)
	if err != nil {
		return errors.Join(err, h.stopTelemetry(ctx))
	}
	if !a.output.quiet {
		sayAttached(e, h, tr)
	}
	if a.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.duration)
		defer cancel()
	}
	started := time.Now()
	reason, runErr := tr.Run(ctx)
	closeErr := tr.Close() // detach before the export's flush: no probe outlives a slow collector
	h.stopTelemetry(ctx)
	why := "interrupted"
	switch {
	case reason == attach.TargetsExited:
		why = "the target processes exited"
	case a.duration > 0 && ctx.Err() == context.DeadlineExceeded:
		why = "--duration reached"
	}
	if !a.output.quiet {
		sayDetached(e, tr.Stats(), time.Since(started), why)
	}
	var jsonErr error
	if a.format == "json" {
		jsonErr = printJSON(e.stdout, newAttachSummary(tr, time.Since(started), why))
	}
	return errors.Join(runErr, closeErr, jsonErr, h.outcome())
}

// checkTargets refuses, before any output file is created, what cannot
// be attached to: eBPF unavailable here, a process without ONNX Runtime,
// a library that is not one.
func (a *attachAction) checkTargets() error {
	if st := attach.Check(); !st.Available {
		return fmt.Errorf("eBPF uprobes cannot be used here: %s", st.Reason)
	}
	pids, _ := parsePIDs(a.pids) // checked by options
	for _, pid := range pids {
		if _, err := attach.FindTarget(pid); err != nil {
			return err
		}
	}
	if a.lib != "" {
		if _, err := attach.Resolve(a.lib); err != nil {
			return err
		}
	}
	return nil
}

// sayAttached prints what the probes are on and where the telemetry goes.
func sayAttached(e *env, h *harness, tr *attach.Tracer) {
	for _, tg := range tr.Targets() {
		for _, l := range tg.Libraries {
			fmt.Fprintf(e.stderr, "ortel attach: process %d (%s) uses %s\n", tg.PID, tg.Exe, l.Path)
		}
	}
	for _, o := range tr.Libraries() {
		fmt.Fprintf(e.stderr, "ortel attach: probes on ONNX Runtime %s (build id %s): Run, RunWithBinding, CreateSession, CreateSessionFromArray, ReleaseSession\n", o.Version, shortID(o.BuildID))
	}
	if h.tel.Resolved.Mode == telemetry.ModeFile {
		fmt.Fprintf(e.stderr, "ortel attach: no OTLP endpoint set; writing %s\n", strings.Join(h.tel.Files(), ", "))
	} else {
		fmt.Fprintf(e.stderr, "ortel attach: exporting traces to %s\n", h.tel.Resolved.Traces.Where())
	}
}

// sayDetached prints what the probes saw.
func sayDetached(e *env, st attach.Stats, took time.Duration, why string) {
	sessions := "sessions"
	if st.Sessions == 1 {
		sessions = "session"
	}
	fmt.Fprintf(e.stderr, "ortel attach: detached after %s (%s): %d runs (%d failed), %d %s created\n",
		took.Round(time.Millisecond), why, st.Runs, st.Errors, st.Sessions, sessions)
	if st.Lost > 0 {
		fmt.Fprintf(e.stderr, "ortel attach: warning: %d runs lost: the probes' ring buffer was full (ortel fell behind the target)\n", st.Lost)
	}
	if st.Bad > 0 {
		fmt.Fprintf(e.stderr, "ortel attach: %d malformed probe events dropped\n", st.Bad)
	}
}

// parsePIDs reads --pid values: whole numbers above 0.
func parsePIDs(values []string) ([]int, error) {
	var pids []int
	for _, p := range values {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 {
			return nil, usagef("--pid %q: want a process id, a whole number above 0", p)
		}
		pids = append(pids, n)
	}
	return pids, nil
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
