package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"

	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

const agentUsage = `Usage:
  ortel agent [flags]

Runs every available hardware receiver — cpu, memory, process, perf, rapl,
thermal, nvml — and exports their readings as OpenTelemetry metrics over OTLP
(or, with no OTLP endpoint, to OTLP/JSON files), until interrupted. Run it
beside an inference process and point --pid at it for per-process readings.
Sources that are missing here say why once and are skipped (see ortel doctor).

Flags:
  --interval D        how often readings are collected and exported (default:
                      OTEL_METRIC_EXPORT_INTERVAL, else 1s; 100ms works);
                      the flag wins over the variable
  --pid N             a process to watch (repeatable; default: the agent itself,
                      unless --discover); it must exist at the start; when it
                      exits later the agent says so once and keeps collecting
                      the rest
  --discover          watch every process that loads ONNX Runtime, present and
                      future, besides any --pid: /proc (under ORTEL_HOST_ROOT)
                      is rescanned every --discover-interval, new processes
                      are added and exited ones dropped, each said once on
                      stderr. Seeing other users' processes needs root or
                      CAP_SYS_PTRACE. The process readings follow; GPU
                      readings per process cover every process on the GPUs,
                      each with its pod; perf counters stay on the --pid
                      processes (default: the agent itself)
  --discover-interval D  how often --discover rescans (default 10s)
  --duration D        stop after this long (default: run until interrupted)
  --out DIR           where OTLP/JSON files go when no endpoint is set (default ortel-out/agent)
  --rotate-mb N       start a new OTLP/JSON file when one reaches N MiB; 0 never
                      rotates (default 64)
  --rotate-keep N     rotated files kept per signal, the newest (default 4)
  --otlp-endpoint URL send OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT)
  --export-timeout D  give up on one OTLP export, and on a dead collector at exit,
                      after D (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)
` + spoolFlagsUsage + `  --quiet             no status lines on stderr
` + healthFlagUsage + `
` + uiFlagsUsage + `

Examples:
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 ortel agent --pid 4242
  sudo ortel agent --discover
  ortel agent --interval 100ms --duration 30s
`

func agentCommand() *command {
	return &command{
		name:    "agent",
		summary: "export hardware readings (CPU, memory, process, perf, RAPL, thermal, GPU) continuously",
		usage:   agentUsage,
		run:     runAgent,
	}
}

func runAgent(ctx context.Context, e *env, args []string) error {
	started := time.Now()
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	var interval, duration, discoverEvery time.Duration
	var pidFlags listFlag
	var out, endpoint, healthAddr string
	var quiet, discoverOn bool
	var uf uiFlags
	uf.register(fs)
	fs.DurationVar(&interval, "interval", commandTelemetry("agent").interval, "")
	fs.DurationVar(&duration, "duration", 0, "")
	fs.Var(&pidFlags, "pid", "")
	fs.BoolVar(&discoverOn, "discover", false, "")
	fs.DurationVar(&discoverEvery, "discover-interval", 10*time.Second, "")
	fs.StringVar(&out, "out", commandTelemetry("agent").out, "")
	fs.StringVar(&endpoint, "otlp-endpoint", "", "")
	var xf exportFlags
	xf.register(fs)
	fs.BoolVar(&quiet, "quiet", false, "")
	fs.StringVar(&healthAddr, "health-addr", "", "")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("agent takes no arguments, got %q", pos[0])
	}
	if err := xf.validate(); err != nil {
		return err
	}
	if interval < 10*time.Millisecond {
		return usagef("--interval must be 10ms or more (got %s)", interval)
	}
	if duration < 0 {
		return usagef("--duration must not be negative (got %s)", duration)
	}
	if discoverEvery < 10*time.Millisecond {
		return usagef("--discover-interval must be 10ms or more (got %s)", discoverEvery)
	}
	if !discoverOn && flagSet(fs, "discover-interval") {
		return usagef("--discover-interval needs --discover")
	}
	if err := uf.validate(); err != nil {
		return err
	}
	if err := checkHealthAddr(healthAddr); err != nil {
		return err
	}
	pids, err := parsePIDs(pidFlags)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		// Signal 0 checks that the process exists; EPERM says it does
		// (someone else's process, still readable through /proc).
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("--pid %d: no such process", pid)
		}
	}
	ui := uf.newUI()
	cfg := telemetryConfig("agent", out)
	cfg.Endpoint, cfg.ExportTimeout, cfg.Rotation, cfg.Readers = endpoint, xf.timeout, xf.rotation(), ui.readers()
	cfg.SpoolMaxBytes = xf.spool.maxBytes()
	if flagSet(fs, "interval") {
		cfg.MetricInterval = interval // else OTEL_METRIC_EXPORT_INTERVAL, else 1s
	}
	tel, err := startTelemetry(ctx, e, "agent", cfg)
	if err != nil {
		return err
	}
	interval = tel.Resolved.MetricInterval
	if err := ui.start(ctx, e, "agent", uf); err != nil {
		return errors.Join(err, stopTelemetry(ctx, tel))
	}
	defer ui.stop()
	health, err := startAgentHealth(e, healthAddr, tel, interval, quiet)
	if err != nil {
		return errors.Join(err, stopTelemetry(ctx, tel))
	}
	defer health.close()
	// NVML starts in the background (GPUWait 0): a slow driver does not
	// delay the start; GPUs join the export when found.
	set := hardware.Open(ctx, hardware.Options{MeterProvider: tel.MeterProvider, PIDs: pids, NoSelf: discoverOn})
	if discoverOn && set.Process == nil {
		err := fmt.Errorf("--discover: the process receiver is not available: %s", statusOf(set, "process"))
		return errors.Join(err, set.Shutdown(ctx), stopTelemetry(ctx, tel))
	}
	startup := time.Since(started)
	if !quiet {
		var on, off []string
		for _, s := range set.Statuses() {
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
		if tel.Resolved.Mode == telemetry.ModeFile {
			fmt.Fprintf(e.stderr, "ortel agent: no OTLP endpoint set; writing %s\n", strings.Join(tel.Files(), ", "))
		} else {
			fmt.Fprintf(e.stderr, "ortel agent: exporting to %s\n", tel.Resolved.Metrics.Where())
		}
	}
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	waitDiscovery := func() {}
	if discoverOn {
		var w io.Writer
		if !quiet {
			w = e.stderr
		}
		waitDiscovery = startDiscovery(ctx, w, set.Process, discoverEvery, pids)
	}
	<-ctx.Done()
	waitDiscovery() // before the receivers stop: no Watch after Shutdown

	// The telemetry's final export collects once more, then the receivers stop.
	shutdownErr := stopTelemetry(ctx, tel)
	set.Shutdown(context.WithoutCancel(ctx))
	if !quiet {
		st := tel.Stats()
		failed := fmt.Sprintf("%d failed", st.MetricExportFailures)
		if st.MetricExportsSpooled > 0 {
			failed += fmt.Sprintf(", %d of them spooled", st.MetricExportsSpooled)
		}
		fmt.Fprintf(e.stderr, "ortel agent: stopped after %s: %d metric exports (%s), peak RSS %s\n",
			time.Since(started).Round(time.Millisecond), st.MetricExports, failed, peakRSS())
	}
	return telemetryOutcome(e, "agent", tel, shutdownErr)
}

// peakRSS is this process's peak resident memory.
func peakRSS() string {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MB", float64(ru.Maxrss)/1024) // Linux reports KiB
}

// flagSet reports whether flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
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
