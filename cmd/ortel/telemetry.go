package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/ortel-dev/ortel/internal/telemetry"
)

// startTelemetry sets up the command's exporters (ServiceVersion is
// ortel's version) and prints the configuration warnings once, prefixed
// with the command's name.
func startTelemetry(ctx context.Context, e *env, command string, cfg telemetry.Config) (*telemetry.Telemetry, error) {
	cfg.ServiceVersion = version
	if cfg.SpoolDir == "" && cfg.OutputDir != "" {
		cfg.SpoolDir = filepath.Join(cfg.OutputDir, "spool")
	}
	tel, err := telemetry.Setup(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("set up telemetry: %w", err)
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
		return &lostError{lines: lost, spooled: spooled, spoolDir: tel.Resolved.SpoolDir}
	}
	if shutdownErr != nil {
		fmt.Fprintf(e.stderr, "ortel %s: warning: %v\n", command, shutdownErr)
	}
	return nil
}
