package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ortel-dev/ortel/internal/telemetry"
)

// telemetryCommand is what a command that exports telemetry gives
// telemetry.Setup unless its flags say otherwise: one table, read by the
// commands and by doctor, so doctor describes what each command does.
type telemetryCommand struct {
	name, service string
	// out is the default --out folder: files (with no collector) and the
	// spool go under it; "" for replay, which writes nothing.
	out string
	// interval is the default metric interval when neither the command's
	// flag nor OTEL_METRIC_EXPORT_INTERVAL is set; 0 for telemetry's 10s.
	interval time.Duration
	// rotation is the default rotation of its files (outputFlags).
	rotation telemetry.Rotation
}

// benchOutPattern is bench's default --out, with the model's name and the
// start time filled in (benchOutDir).
const benchOutPattern = "ortel-out/MODEL-TIME"

var telemetryCommands = []telemetryCommand{
	{name: "bench", service: "ortel", out: benchOutPattern},
	{name: "agent", service: "ortel-agent", out: "ortel-out/agent", interval: time.Second, rotation: defaultRotation},
	{name: "attach", service: "ortel-attach", out: "ortel-out/attach", rotation: defaultRotation},
	{name: "import", service: "ortel", out: "ortel-out/import"},
	{name: "replay"},
}

// commandTelemetry returns the row of command, which must exist.
func commandTelemetry(command string) telemetryCommand {
	for _, c := range telemetryCommands {
		if c.name == command {
			return c
		}
	}
	panic("no telemetry row for command " + command)
}

// telemetryConfig is command's telemetry.Config for the output folder out
// (the --out flag): its service name, folder, spool under it, default
// metric interval. The command adds what its other flags say.
func telemetryConfig(command, out string) telemetry.Config {
	c := commandTelemetry(command)
	cfg := telemetry.Config{ServiceName: c.service, OutputDir: out, DefaultMetricInterval: c.interval, Rotation: c.rotation}
	if out != "" {
		cfg.SpoolDir = filepath.Join(out, "spool")
	}
	return cfg
}

// benchOutDir is bench's default output folder for model, started at now.
func benchOutDir(modelName string, now time.Time) string {
	return filepath.Join("ortel-out", modelName+"-"+now.Format("20060102-150405"))
}

// telemetryResolved, when set (by tests), is told the configuration each
// command resolved.
var telemetryResolved func(command string, r telemetry.Resolved)

// startTelemetry sets up the command's exporters (ServiceVersion is
// ortel's version) and prints the configuration warnings once, prefixed
// with the command's name.
func startTelemetry(ctx context.Context, e *env, command string, cfg telemetry.Config) (*telemetry.Telemetry, error) {
	cfg.ServiceVersion = version
	tel, err := telemetry.Setup(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("set up telemetry: %w", err)
	}
	if telemetryResolved != nil {
		telemetryResolved(command, tel.Resolved)
	}
	for _, w := range tel.Resolved.Warnings {
		fmt.Fprintf(e.stderr, "ortel %s: warning: %s\n", command, w)
	}
	return tel, nil
}

// stopTelemetry flushes and shuts the exporters down, also after ctx was
// canceled (Ctrl-C): what was recorded is not lost. Shutdown bounds itself
// by the configuration's ShutdownTimeout.
func stopTelemetry(ctx context.Context, tel *telemetry.Telemetry) error {
	return tel.Shutdown(context.WithoutCancel(ctx))
}

// telemetryOutcome is what happened to a command's telemetry, after
// stopTelemetry: nil when everything it was asked to send was delivered, a
// *lostError naming each signal that lost or spooled some otherwise (exit
// code 4 when the command's work succeeded; a command that failed returns
// it joined to its own error, so its exit says both). A shutdown error
// with nothing counted as lost is printed as a warning.
func telemetryOutcome(e *env, command string, tel *telemetry.Telemetry, shutdownErr error) error {
	st := tel.Stats()
	notes := tel.SpoolRepairs()
	if lost, spooled := st.Lost(), st.Spooled(); len(lost) > 0 || len(spooled) > 0 {
		return &lostError{lines: lost, spooled: spooled, spoolDir: tel.Resolved.SpoolDir, notes: notes, waited: tel.ShutdownTook()}
	}
	if shutdownErr != nil {
		fmt.Fprintf(e.stderr, "ortel %s: warning: %v\n", command, shutdownErr)
	}
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "ortel %s: telemetry: %s\n", command, n)
	}
	return nil
}

// telemetryCounts says in one line what became of the telemetry, for a
// command that stopped before its report (which holds these counts).
func telemetryCounts(st telemetry.Stats) string {
	return fmt.Sprintf("telemetry: %d spans ended: %d exported, %d spooled, %d lost; %d metric exports written or sent, %d failed (%d of them spooled)",
		st.SpansEnded, st.SpansExported, st.SpansSpooled, st.SpansDropped, st.MetricExports, st.MetricExportFailures, st.MetricExportsSpooled)
}

// interrupted rewords the error of work that a signal (Ctrl-C, SIGTERM)
// stopped: the signal is the cause, whatever the work said.
func interrupted(ctx context.Context, err error, what string) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("stopped by a signal (%v) before %s", context.Cause(ctx), what)
}
