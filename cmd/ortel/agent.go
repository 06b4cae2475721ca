package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/telemetry"
	"github.com/ortel-dev/ortel/internal/units"
)

const agentIntro = `Usage:
  ortel agent [flags]

Runs every available hardware receiver — cpu, memory, process, perf, rapl,
thermal, nvml — and exports their readings as OpenTelemetry metrics over OTLP
(or, with no OTLP endpoint, to OTLP/JSON files), until interrupted. Run it
beside an inference process and point --pid at it for per-process readings.
Sources that are missing here say why once and are skipped (see ortel doctor).
`

const agentOutro = `
Examples:
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 ortel agent --pid 4242
  sudo ortel agent --discover
  sudo ortel agent --discover --attach     # run spans and metrics too, probes on 3s of every minute
  ortel agent --interval 100ms --duration 30s
`

func agentCommand() *command {
	return &command{
		name:    "agent",
		summary: "export hardware readings (CPU, memory, process, perf, RAPL, thermal, GPU) continuously",
		intro:   agentIntro,
		outro:   agentOutro,
		args:    noArgs,
		new:     func() action { return new(agentAction) },
	}
}

// agentAction is one ortel agent.
type agentAction struct {
	fs                                *flagSet
	interval, duration, discoverEvery time.Duration
	pids                              listFlag
	discover                          bool
	healthAddr, format                string
	output                            outputFlags
	export                            exportFlags
	ui                                uiFlags
	attach                            attachFlags
}

func (a *agentAction) flags(fs *flagSet) {
	a.fs = fs
	fs.durationFlag(&a.interval, "interval", "D", commandTelemetry("agent").interval,
		"how often readings are collected and exported (default: OTEL_METRIC_EXPORT_INTERVAL, else 1s; 100ms works); "+
			"the flag wins over the variable")
	fs.valueFlag(&a.pids, "pid", "N",
		"a process to watch (repeatable; default: the agent itself, unless --discover); it must exist at the start; "+
			"when it exits later the agent says so once and keeps collecting the rest")
	fs.boolFlag(&a.discover, "discover", false,
		"watch every process that loads ONNX Runtime, present and future, besides any --pid: /proc (under "+
			"ORTEL_HOST_ROOT) is rescanned every --discover-interval, new processes are added and exited ones dropped, "+
			"each said once on stderr. Seeing other users' processes needs root or CAP_SYS_PTRACE. The process readings "+
			"follow; GPU readings per process cover every process on the GPUs, each with its pod; perf counters stay on "+
			"the --pid processes (default: the agent itself)")
	fs.durationFlag(&a.discoverEvery, "discover-interval", "D", 10*time.Second, "how often --discover rescans (default 10s)")
	a.attach.register(fs)
	fs.durationFlag(&a.duration, "duration", "D", 0, "stop after this long (default: run until interrupted)")
	a.output.register(fs, "agent", outputRotate|outputQuiet)
	a.export.register(fs, exportAll|exportOff)
	fs.stringFlag(&a.healthAddr, "health-addr", "ADDR", "", healthFlagHelp)
	a.ui.register(fs)
	registerTextOrJSON(fs, &a.format, "what the agent did, printed on stdout when it stops")
}

// validate checks the flags before any work starts.
func (a *agentAction) validate() error {
	for _, v := range []func() error{a.output.validate, a.export.validate, func() error { return checkTextOrJSON(a.format) }} {
		if err := v(); err != nil {
			return err
		}
	}
	switch {
	case a.interval < 10*time.Millisecond:
		return usagef("--interval must be 10ms or more (got %s)", a.interval)
	case a.duration < 0:
		return usagef("--duration must not be negative (got %s)", a.duration)
	case a.discoverEvery < 10*time.Millisecond:
		return usagef("--discover-interval must be 10ms or more (got %s)", a.discoverEvery)
	case !a.discover && flagGiven(a.fs.FlagSet, "discover-interval"):
		return usagef("--discover-interval needs --discover")
	}
	if err := a.ui.validate(); err != nil {
		return err
	}
	if err := a.attach.validate(a.fs, a.discover); err != nil {
		return err
	}
	return checkHealthAddr(a.healthAddr)
}

func (a *agentAction) run(ctx context.Context, e *env, pos []string) error {
	started := time.Now()
	if len(pos) > 0 {
		return usagef("agent takes no arguments, got %q", pos[0])
	}
	if err := a.validate(); err != nil {
		return err
	}
	pids, err := existingPIDs(a.pids)
	if err != nil {
		return err
	}
	tcfg := a.output.telemetry("agent", &a.export)
	if flagGiven(a.fs.FlagSet, "interval") {
		tcfg.MetricInterval = a.interval // else OTEL_METRIC_EXPORT_INTERVAL, else 1s
	}
	// NVML starts in the background (GPUWait 0): a slow driver does not
	// delay the start; GPUs join the export when found.
	h, err := startHarness(ctx, e, "agent", harnessConfig{telemetry: tcfg, ui: &a.ui,
		hardware: &hardware.Config{PIDs: pids, NoSelf: a.discover}})
	if err != nil {
		return err
	}
	defer h.close(ctx)
	interval := h.tel.Resolved.MetricInterval
	health, err := startAgentHealth(e, a.healthAddr, h.tel, interval, a.output.quiet)
	if err != nil {
		return errors.Join(err, h.stopTelemetry(ctx))
	}
	h.onClose(health.close)
	if a.discover && h.hw.Process == nil {
		err := fmt.Errorf("--discover: the process receiver is not available: %s", statusOf(h.hw, "process"))
		return errors.Join(err, h.stopTelemetry(ctx))
	}
	if !a.output.quiet {
		a.sayStarted(e, h, time.Since(started), interval)
	}
	if a.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.duration)
		defer cancel()
	}
	waitDiscovery, stopAttach := func() {}, func() {}
	if a.discover {
		var w io.Writer
		var say func(string, ...any)
		if !a.output.quiet {
			w = &lockedWriter{w: e.stderr} // discovery and attach say things from their goroutines
			say = func(format string, args ...any) { fmt.Fprintf(w, "ortel agent: "+format+"\n", args...) }
		}
		var att *attaching
		if a.attach.on {
			if att, stopAttach, err = startAttach(ctx, &a.attach, h, h.hw.Process.Root(), e, say); err != nil {
				return errors.Join(fmt.Errorf("--attach: %w", err), h.stopTelemetry(ctx))
			}
		}
		waitDiscovery = startDiscovery(ctx, w, h.hw.Process, a.discoverEvery, pids, att)
	}
	<-ctx.Done()
	waitDiscovery() // before the receivers stop: no Watch after Shutdown
	stopAttach()    // every probe off before the final export

	// The telemetry's final export collects once more; the receivers stop
	// after it (close).
	h.stopTelemetry(ctx)
	if !a.output.quiet {
		sayStopped(e, h, started)
	}
	if a.format == "json" {
		return errors.Join(printJSON(e.stdout, newAgentSummary(h, started)), h.outcome())
	}
	return h.outcome()
}

// existingPIDs parses --pid's values and checks that each process exists.
func existingPIDs(values []string) ([]int, error) {
	pids, err := parsePIDs(values)
	if err != nil {
		return nil, err
	}
	for _, pid := range pids {
		// Signal 0 checks that the process exists; EPERM says it does
		// (someone else's process, still readable through /proc).
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("--pid %d: no such process", pid)
		}
	}
	return pids, nil
}

// sayStopped prints the agent's last line: how long it ran, its metric
// exports (failed, spooled) and its peak RSS.
func sayStopped(e *env, h *harness, started time.Time) {
	st := h.tel.Stats()
	failed := fmt.Sprintf("%d failed", st.MetricExportFailures)
	if st.MetricExportsSpooled > 0 {
		failed += fmt.Sprintf(", %d of them spooled", st.MetricExportsSpooled)
	}
	fmt.Fprintf(e.stderr, "ortel agent: stopped after %s: %d metric exports (%s), peak RSS %s\n",
		time.Since(started).Round(time.Millisecond), st.MetricExports, failed, peakRSS())
}

// sayStarted prints what the agent collects and where it goes.
func (a *agentAction) sayStarted(e *env, h *harness, startup, interval time.Duration) {
	var on, off []string
	for _, s := range h.hw.Statuses() {
		if s.Available {
			on = append(on, s.Source)
		} else {
			off = append(off, s.Source+" ("+s.Reason+")")
		}
	}
	fmt.Fprintf(e.stderr, "ortel agent: started in %s, collecting every %s from: %s\n", startup.Round(10*time.Microsecond), interval, strings.Join(on, ", "))
	for _, o := range off {
		fmt.Fprintf(e.stderr, "ortel agent: not available: %s\n", o)
	}
	if h.tel.Resolved.Mode == telemetry.ModeFile {
		fmt.Fprintf(e.stderr, "ortel agent: no OTLP endpoint set; writing %s\n", strings.Join(h.tel.Files(), ", "))
	} else {
		fmt.Fprintf(e.stderr, "ortel agent: exporting to %s\n", h.tel.Resolved.Metrics.Where())
	}
}

// peakRSS is this process's peak resident memory.
func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "unknown"
	}
	return units.Bytes(ru.Maxrss * 1024) // Linux reports KiB
}

// statusOf is why source is not available, from the set's statuses.
func statusOf(set *hardware.Set, source string) string {
	for _, s := range set.Statuses() {
		if s.Source == source {
			return s.Reason
		}
	}
	return "not started"
}

// newAgentSummary is what the agent did, for --format json.
func newAgentSummary(h *harness, started time.Time) agentSummary {
	st := h.tel.Stats()
	var ru syscall.Rusage
	var rss int64
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rss = ru.Maxrss * 1024 // Linux reports KiB
	}
	s := agentSummary{DurationS: time.Since(started).Seconds(), MetricExports: st.MetricExports,
		MetricExportFailures: st.MetricExportFailures, MetricExportsSpooled: st.MetricExportsSpooled,
		PeakRSSBytes: rss, Sources: []hardware.Status{}}
	if h.hw != nil {
		s.Sources = append(s.Sources, h.hw.Statuses()...)
	}
	return s
}
