package main

import (
	"context"
	"errors"

	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

// harness starts and stops, in one fixed order, what every command that
// exports telemetry shares (bench, agent, attach, import), so that no
// command writes the sequence out by hand:
//
//	start:  the live view's metric reader, then the telemetry (exporters or
//	        files, and the spool), then the live view's server, then the
//	        hardware receivers, which export through the telemetry
//	stop:   stopTelemetry flushes and shuts the exporters down, also after
//	        SIGINT or SIGTERM (main cancels ctx on them): nothing already
//	        recorded is lost
//	close:  the hardware receivers (after the final export, so their last
//	        readings are in it), the live view, then what the command
//	        handed to onClose (a health server, a signal watcher)
//	report: outcome says what became of the telemetry — nil, or the
//	        *lostError that makes the exit status 4 with one line per
//	        signal lost or spooled and the replay command; failed does the
//	        same for work that failed, with the counts the missing report
//	        would have held, and says when a signal stopped the work
//
// A command calls startHarness, defers close, does its work, calls
// stopTelemetry, and returns outcome (or failed) joined to its own errors;
// main turns that into the exit code (exitWith).
type harness struct {
	e       *env
	command string
	tel     *telemetry.Telemetry
	ui      *liveUI       // nil without --ui
	hw      *hardware.Set // nil without hardware
	closers []func()

	stopped     bool
	shutdownErr error
}

// harnessConfig is what a command starts besides its telemetry.
type harnessConfig struct {
	telemetry telemetry.Config
	// ui is the live view's flags; nil, or without --ui, for none.
	ui       *uiFlags
	uiConfig liveview.Config
	// hardware opens the hardware receivers on the telemetry's
	// MeterProvider; nil for none.
	hardware *hardware.Config
}

// startHarness starts what cfg asks for, in order; on failure what was
// started is stopped again.
func startHarness(ctx context.Context, e *env, command string, cfg harnessConfig) (*harness, error) {
	if err := cfg.uiConfig.Validate(); err != nil {
		return nil, usage(err)
	}
	if cfg.hardware != nil {
		if err := cfg.hardware.Validate(); err != nil {
			return nil, usage(err)
		}
	}
	h := &harness{e: e, command: command}
	if cfg.ui != nil {
		h.ui = cfg.ui.newUI(cfg.uiConfig)
	}
	cfg.telemetry.Readers = append(cfg.telemetry.Readers, h.ui.readers()...)
	tel, err := startTelemetry(ctx, e, command, cfg.telemetry)
	if err != nil {
		return nil, err
	}
	h.tel = tel
	if err := h.ui.start(ctx, e, command); err != nil {
		return nil, errors.Join(err, h.stopTelemetry(ctx))
	}
	if cfg.hardware != nil {
		o := *cfg.hardware
		o.MeterProvider = tel.MeterProvider
		h.hw = hardware.Open(ctx, o)
	}
	return h, nil
}

// onClose adds f to what close stops, before what was added earlier.
func (h *harness) onClose(f func()) { h.closers = append(h.closers, f) }

// stopTelemetry flushes and shuts the exporters down, once, also after ctx
// was canceled; it returns the shutdown's error (outcome reports it too).
func (h *harness) stopTelemetry(ctx context.Context) error {
	if !h.stopped {
		h.stopped = true
		h.shutdownErr = stopTelemetry(ctx, h.tel)
	}
	return h.shutdownErr
}

// close stops, in order, the hardware receivers, the live view and what
// onClose added (the last added first). It stops the telemetry too when
// the command returned before stopTelemetry.
func (h *harness) close(ctx context.Context) {
	_ = h.stopTelemetry(ctx)
	if h.hw != nil {
		h.hw.Shutdown(context.WithoutCancel(ctx))
	}
	h.ui.stop()
	for i := len(h.closers) - 1; i >= 0; i-- {
		h.closers[i]()
	}
}

// outcome is what became of the telemetry, after stopTelemetry: nil when
// everything was delivered, else a *lostError (exit status 4 when the
// command's own work succeeded).
func (h *harness) outcome() error {
	return telemetryOutcome(h.e, h.command, h.tel, h.shutdownErr)
}

// failed is the exit of work that failed before its report: the work's
// error (reworded when a signal stopped it, before what), one line of what
// became of the telemetry, and the outcome. The telemetry must be stopped.
func (h *harness) failed(ctx context.Context, err error, what string) error {
	err = interrupted(ctx, err, what)
	return errors.Join(err, errors.New(telemetryCounts(h.tel.Stats())), h.outcome())
}
