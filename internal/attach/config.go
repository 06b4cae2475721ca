package attach

import (
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/configerr"
)

// ScopeName is the instrumentation scope of what attach emits.
const ScopeName = "github.com/ortel-dev/ortel/internal/attach"

// Config says what Start or NewFleet attaches to and where what it sees
// goes. The zero value of every field but PIDs and Library is a usable
// default.
type Config struct {
	// PIDs are the processes Start attaches to (each must have ONNX
	// Runtime loaded). A Fleet takes its processes from Fleet.Add instead.
	PIDs []int
	// Library makes Start attach to every process, present and future,
	// that maps the ONNX Runtime library file at this path.
	Library string
	// TracerProvider receives the run spans; nil: the global one. To keep
	// no run spans at all, give a no-op one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the run metrics; nil: the global one.
	MeterProvider metric.MeterProvider
	// HostRoot is the folder whose proc folder is read: processes' memory
	// maps, libraries (through HOSTROOT/proc/PID/root) and cgroups (pod
	// attribution), for an agent in a container that sees the host's /proc
	// mounted elsewhere, in the host's PID namespace. "": "/".
	HostRoot string
	// SpanRatio gives a run span to this share of the runs (0 to 1, evenly
	// spread: 0.01 is every hundredth run); the run metrics count every
	// run either way. 0: every run (1).
	SpanRatio float64
	// Duty keeps a Fleet's probes attached for Duty.On out of every
	// Duty.Period and detached the rest of it: a uprobe traps on every
	// call whatever is sampled, so this bounds what the probes cost the
	// targets. Counts are then estimates (what was seen divided by
	// On/Period) and carry onnxruntime.run.sampled_share; histograms hold
	// what was seen. Zero: always attached. Start ignores it.
	Duty DutyCycle
	// Limits bound what a Fleet attaches and turns into telemetry; zero
	// fields take DefaultLimits' values. Start ignores them.
	Limits Limits
}

// DutyCycle is a time on out of every period (Config.Duty).
type DutyCycle struct{ On, Period time.Duration }

// config is a Config with its defaults filled in, as the engine reads it.
type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	pids []int
	lib  string

	root      string  // the host root whose proc folder is read; "/" by default
	spanRatio float64 // the share of runs that get a span; 1 by default
	dutyOn    time.Duration
	duty      time.Duration // 0: always attached
	limits    Limits
}

// FleetDutyOn and FleetDutyPeriod are the fleet's default duty cycle
// (ortel agent --attach-duty): the probes are on for FleetDutyOn of every
// FleetDutyPeriod. BenchmarkFleetCostNode measures what it costs.
const (
	FleetDutyOn     = 3 * time.Second
	FleetDutyPeriod = time.Minute
)

// probesPerLibrary is how many uprobes attach puts on one library file in
// one process: entry and return of Run, RunWithBinding, CreateSession and
// CreateSessionFromArray, and ReleaseSession's entry.
const probesPerLibrary = 9

// Limits bound what a Fleet attaches and turns into telemetry. Zero
// fields take DefaultLimits' values.
type Limits struct {
	// ProcessProbes and NodeProbes bound the uprobes in one process (9 for
	// each ONNX Runtime library it maps) and in all of them together. A
	// process that would pass either is not attached (said once).
	ProcessProbes, NodeProbes int
	// ProcessEvents and NodeEvents bound the runs per second (of one
	// process, of all) that become spans and histogram points; the runs
	// past them are counted, their spans and points shed (Stats.Shed).
	ProcessEvents, NodeEvents int
}

// DefaultLimits are a Fleet's limits where Config.Limits leaves a field zero: two
// ONNX Runtime libraries per process, 64 processes with one library each,
// 10,000 runs/s of one process and 50,000 of all.
var DefaultLimits = Limits{ProcessProbes: 2 * probesPerLibrary, NodeProbes: 64 * probesPerLibrary,
	ProcessEvents: 10_000, NodeEvents: 50_000}

func (cfg Config) resolve() config {
	c := config{tp: cfg.TracerProvider, mp: cfg.MeterProvider, pids: cfg.PIDs, lib: cfg.Library,
		root: cfg.HostRoot, spanRatio: cfg.SpanRatio, dutyOn: cfg.Duty.On, duty: cfg.Duty.Period, limits: cfg.Limits}
	if c.root == "" {
		c.root = "/"
	}
	if c.spanRatio == 0 {
		c.spanRatio = 1
	}
	for _, f := range []struct {
		p *int
		d int
	}{{&c.limits.ProcessProbes, DefaultLimits.ProcessProbes},
		{&c.limits.NodeProbes, DefaultLimits.NodeProbes}, {&c.limits.ProcessEvents, DefaultLimits.ProcessEvents},
		{&c.limits.NodeEvents, DefaultLimits.NodeEvents}} {
		if *f.p == 0 {
			*f.p = f.d
		}
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	return c
}

// Validate checks what c asks Start for, before anything is probed:
// something to attach to, and not both process ids and a library (a
// process that maps the library would be probed twice). Its errors name
// the options as {PIDs} and {Library} (configerr). Start checks the same.
func (c Config) Validate() error {
	return c.resolve().validate()
}

func (c config) validate() error {
	if err := c.validateCommon(); err != nil {
		return err
	}
	switch {
	case len(c.pids) == 0 && c.lib == "":
		return configerr.New("attach", "nothing to attach to: give {PIDs} (repeatable) or {Library}")
	case len(c.pids) > 0 && c.lib != "":
		return configerr.New("attach", "give {PIDs} or {Library}, not both (a process that maps the library would be probed twice)")
	}
	for _, pid := range c.pids {
		if pid <= 0 {
			return configerr.New("attach", "{PIDs} %d: want a process id, a whole number above 0", pid)
		}
	}
	return nil
}

// validateCommon checks what Start and NewFleet share.
func (c config) validateCommon() error {
	if !(c.spanRatio >= 0 && c.spanRatio <= 1) { // NaN fails too
		return configerr.New("attach", "{SpanRatio} %g: want a share from 0 to 1", c.spanRatio)
	}
	return nil
}

// ValidateFleet checks what c asks NewFleet for, before anything is
// probed. Its errors name the fields as {SpanRatio}, {Duty} and
// {Limits.ProcessProbes} (and the other limits). NewFleet checks the same.
func (c Config) ValidateFleet() error {
	return c.resolve().validateFleet()
}

func (c config) validateFleet() error {
	if err := c.validateCommon(); err != nil {
		return err
	}
	switch {
	case len(c.pids) > 0 || c.lib != "":
		return configerr.New("attach", "a fleet attaches the processes given to Add, not {PIDs} or {Library}")
	case c.duty < 0 || c.dutyOn < 0 || c.dutyOn > c.duty:
		return configerr.New("attach", "{Duty} %s/%s: want a time attached no longer than its period, both positive", c.dutyOn, c.duty)
	case c.duty > 0 && c.dutyOn < time.Second:
		return configerr.New("attach", "{Duty} %s/%s: attach for 1s or more per period (attaching takes milliseconds of each target's time)", c.dutyOn, c.duty)
	}
	for _, l := range []struct {
		field string
		v     int
	}{{"{Limits.ProcessProbes}", c.limits.ProcessProbes}, {"{Limits.NodeProbes}", c.limits.NodeProbes},
		{"{Limits.ProcessEvents}", c.limits.ProcessEvents}, {"{Limits.NodeEvents}", c.limits.NodeEvents}} {
		if l.v < 0 {
			return configerr.New("attach", l.field+" %d: want a number above 0", l.v)
		}
	}
	if c.limits.ProcessProbes < probesPerLibrary || c.limits.NodeProbes < probesPerLibrary {
		return configerr.New("attach", "{Limits.ProcessProbes} and {Limits.NodeProbes} must allow one library's %d probes", probesPerLibrary)
	}
	return nil
}

// share is the share of the time a Fleet's probes are attached: 1 when
// always.
func (c config) share() float64 {
	if c.duty == 0 {
		return 1
	}
	return float64(c.dutyOn) / float64(c.duty)
}
