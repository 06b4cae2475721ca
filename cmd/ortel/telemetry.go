package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
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
	// rotation is the default rotation of its files (exportFlags).
	rotation telemetry.Rotation
}

// The defaults of --rotate-mb and --rotate-keep (exportFlags).
const (
	defaultRotateMB   = 64
	defaultRotateKeep = 4
)

var defaultRotation = telemetry.Rotation{MaxBytes: defaultRotateMB << 20, Backups: defaultRotateKeep}

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

// checkExportTimeout checks the --export-timeout flag: 0 (unset) or a
// positive duration.
func checkExportTimeout(d time.Duration) error {
	if d < 0 {
		return usagef("--export-timeout must be positive (got %s)", d)
	}
	return nil
}

// stopTelemetry flushes and shuts the exporters down, also after ctx was
// canceled (Ctrl-C): what was recorded is not lost. Shutdown bounds itself
// by the configuration's ShutdownTimeout.
func stopTelemetry(ctx context.Context, tel *telemetry.Telemetry) error {
	return tel.Shutdown(context.WithoutCancel(ctx))
}

// telemetryOutcome is what a command that finished its work returns after
// stopTelemetry: nil when everything it was asked to send was delivered, a
// *lostError (exit code 4) naming each signal that lost or spooled some
// otherwise. A
// shutdown error with nothing counted as lost is printed as a warning.
func telemetryOutcome(e *env, command string, tel *telemetry.Telemetry, shutdownErr error) error {
	st := tel.Stats()
	if lost, spooled := st.Lost(), st.Spooled(); len(lost) > 0 || len(spooled) > 0 {
		return &lostError{lines: lost, spooled: spooled, spoolDir: tel.Resolved.SpoolDir, waited: tel.ShutdownTook()}
	}
	if shutdownErr != nil {
		fmt.Fprintf(e.stderr, "ortel %s: warning: %v\n", command, shutdownErr)
	}
	return nil
}

// exportFlags are a long-running command's telemetry output flags (agent,
// attach): the export timeout and the rotation of its OTLP/JSON files.
type exportFlags struct {
	timeout              time.Duration
	rotateMB, rotateKeep int
}

func (f *exportFlags) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.timeout, "export-timeout", 0, "")
	fs.IntVar(&f.rotateMB, "rotate-mb", defaultRotateMB, "")
	fs.IntVar(&f.rotateKeep, "rotate-keep", defaultRotateKeep, "")
}

func (f *exportFlags) validate() error {
	if err := checkExportTimeout(f.timeout); err != nil {
		return err
	}
	if f.rotateMB < 0 || f.rotateMB > 1<<20 {
		return usagef("--rotate-mb must be between 0 and %d (got %d)", 1<<20, f.rotateMB)
	}
	if f.rotateKeep < 1 {
		return usagef("--rotate-keep must be 1 or more (got %d)", f.rotateKeep)
	}
	return nil
}

func (f *exportFlags) rotation() telemetry.Rotation {
	return telemetry.Rotation{MaxBytes: int64(f.rotateMB) << 20, Backups: f.rotateKeep}
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
