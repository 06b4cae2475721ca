package main

import (
	"time"

	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

// Flag groups: the flags several commands share, each registered by one
// function with one help text, validated by one method, and applied to
// the engine's configuration by one method. A command registers the
// groups it needs (see its flags method); the live view's group is
// uiFlags (ui.go), the analysis's analysisFlags (analysisflags.go).

// exportFlags is the OTLP export group: where telemetry is sent, how long
// an export may take, and how much a dead collector may leave in the
// spool.
type exportFlags struct {
	endpoint string
	timeout  time.Duration
	spoolMB  int
	off      bool
	parts    exportParts
}

// exportParts says which of the group's flags a command takes besides
// --otlp-endpoint.
type exportParts int

const (
	// exportTimeout: --export-timeout (every command that sends).
	exportTimeout exportParts = 1 << iota
	// exportSpool: --spool-max-mb (every command that spools).
	exportSpool
	// exportOff: --no-telemetry (the commands whose telemetry is a
	// by-product of their work: bench, agent, attach; not import, whose
	// spans are its work).
	exportOff
	// exportAll is what a command that sends and spools takes.
	exportAll = exportTimeout | exportSpool
)

func (x *exportFlags) register(fs *flagSet, parts exportParts) {
	x.parts = parts
	fs.stringFlag(&x.endpoint, "otlp-endpoint", "URL", "",
		"send OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT)")
	if parts&exportTimeout != 0 {
		fs.durationFlag(&x.timeout, "export-timeout", "D", 0,
			"give up on one OTLP export, and on a dead collector at exit, after D (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)")
	}
	if parts&exportSpool != 0 {
		fs.intFlag(&x.spoolMB, "spool-max-mb", "N", int(telemetry.DefaultSpoolMaxBytes>>20),
			"bound of the spool folder (OUT/spool), where exports a collector could not take are kept for ortel replay: "+
				"past it they are dropped and counted, per signal (default 256; what earlier runs left counts, what a replay sent whole is reclaimed)")
	}
	if parts&exportOff != 0 {
		fs.boolFlag(&x.off, "no-telemetry", false,
			"record, write and send no telemetry (no traces.jsonl, metrics.jsonl or spool, nothing to a collector); what the command itself writes, such as bench's report, is still written")
	}
}

func (x *exportFlags) validate() error {
	if x.timeout < 0 {
		return usagef("--export-timeout must be positive (got %s)", x.timeout)
	}
	if x.parts&exportSpool != 0 && (x.spoolMB < 1 || x.spoolMB > 1<<20) {
		return usagef("--spool-max-mb must be between 1 and %d (got %d)", 1<<20, x.spoolMB)
	}
	if x.off && x.endpoint != "" {
		return usagef("--no-telemetry and --otlp-endpoint %s contradict each other: give one", x.endpoint)
	}
	return nil
}

// apply sets the group's values in the command's telemetry configuration.
func (x *exportFlags) apply(cfg *telemetry.Config) {
	cfg.Endpoint, cfg.ExportTimeout, cfg.Disabled = x.endpoint, x.timeout, x.off
	if x.parts&exportSpool != 0 {
		cfg.SpoolMaxBytes = int64(x.spoolMB) << 20
	}
}

// outputFlags is the output group: the folder a command writes into, the
// rotation of its OTLP/JSON files (the long-running commands), and
// whether it says what it does on stderr.
type outputFlags struct {
	out                  string
	rotateMB, rotateKeep int
	quiet                bool
	parts                outputParts
}

// outputParts says which of the group's flags a command takes besides
// --out.
type outputParts int

const (
	// outputRotate: --rotate-mb and --rotate-keep.
	outputRotate outputParts = 1 << iota
	// outputQuiet: --quiet.
	outputQuiet
)

// The defaults of --rotate-mb and --rotate-keep.
const (
	defaultRotateMB   = 64
	defaultRotateKeep = 4
)

var defaultRotation = telemetry.Rotation{MaxBytes: defaultRotateMB << 20, Backups: defaultRotateKeep}

// register adds the group for command, whose row in telemetryCommands
// gives --out's default.
func (o *outputFlags) register(fs *flagSet, command string, parts outputParts) {
	o.parts = parts
	def := commandTelemetry(command).out
	value := def
	if def == benchOutPattern {
		value = "" // filled in when the model is known: benchOutDir
	}
	fs.stringFlag(&o.out, "out", "DIR", value,
		"output folder: what the command writes, OTLP/JSON files when no OTLP endpoint is set, and the spool (default "+def+")")
	if parts&outputRotate != 0 {
		fs.intFlag(&o.rotateMB, "rotate-mb", "N", defaultRotateMB,
			"start a new OTLP/JSON file when one reaches N MiB; 0 never rotates (default 64)")
		fs.intFlag(&o.rotateKeep, "rotate-keep", "N", defaultRotateKeep,
			"rotated files kept per signal, the newest (default 4)")
	}
	if parts&outputQuiet != 0 {
		fs.boolFlag(&o.quiet, "quiet", false, "no progress or status lines on stderr")
	}
}

func (o *outputFlags) validate() error {
	if o.parts&outputRotate == 0 {
		return nil
	}
	if o.rotateMB < 0 || o.rotateMB > 1<<20 {
		return usagef("--rotate-mb must be between 0 and %d (got %d)", 1<<20, o.rotateMB)
	}
	if o.rotateKeep < 1 {
		return usagef("--rotate-keep must be 1 or more (got %d)", o.rotateKeep)
	}
	return nil
}

// telemetry is command's telemetry configuration for the folder and
// rotation the flags give, with exp's export flags applied.
func (o *outputFlags) telemetry(command string, exp *exportFlags) telemetry.Config {
	cfg := telemetryConfig(command, o.out)
	if o.parts&outputRotate != 0 {
		cfg.Rotation = telemetry.Rotation{MaxBytes: int64(o.rotateMB) << 20, Backups: o.rotateKeep}
	}
	exp.apply(&cfg)
	return cfg
}

// hardwareFlags is the hardware group of a command that samples the
// hardware receivers while it measures (bench).
type hardwareFlags struct {
	off      bool
	interval time.Duration
}

func (h *hardwareFlags) register(fs *flagSet) {
	fs.boolFlag(&h.off, "no-hardware", false,
		"do not start the hardware receivers (CPU, memory, perf, RAPL, thermal, NVIDIA GPU) or sample them")
	fs.durationFlag(&h.interval, "hw-interval", "D", hardware.DefaultInterval,
		"how often the measured phase samples the hardware (default 200ms)")
}

func (h *hardwareFlags) validate() error {
	if h.interval < 10*time.Millisecond {
		return usagef("--hw-interval must be 10ms or more (got %s)", h.interval)
	}
	return nil
}

// options is what the harness opens, nil with --no-hardware.
func (h *hardwareFlags) options(gpuWait time.Duration) *hardware.Config {
	if h.off {
		return nil
	}
	return &hardware.Config{GPUWait: gpuWait}
}
