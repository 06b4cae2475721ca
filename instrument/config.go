package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Environment variables read by New* constructors. Options override them.
const (
	// EnvProfileEvery profiles every Nth run (0 = off).
	EnvProfileEvery = "ORTEL_PROFILE_EVERY"
	// EnvProfileRatio profiles each run with this probability (0 to 1).
	EnvProfileRatio = "ORTEL_PROFILE_RATIO"
	// EnvProfileWindowRuns caps the runs held by one profiled session window.
	EnvProfileWindowRuns = "ORTEL_PROFILE_WINDOW_RUNS"
	// EnvProfileDir is where profiled runs write ORT's JSON files.
	EnvProfileDir = "ORTEL_PROFILE_DIR"
	// EnvProfileMaxCPUShare caps profiling's extra CPU at this share of the
	// session's run time (0 to 1; 0 = no cap).
	EnvProfileMaxCPUShare = "ORTEL_PROFILE_MAX_CPU_SHARE"
	// EnvProfileSlowRun profiles the next runs after a run slower than this
	// duration (a Go duration: 50ms). Empty or 0 = off.
	EnvProfileSlowRun = "ORTEL_PROFILE_SLOW_RUN"
)

// Defaults of the profiling window.
const (
	DefaultWindowRuns = 16
	DefaultWindowAge  = 30 * time.Second
)

// Defaults of the triggers.
const (
	DefaultTailRuns        = 5
	DefaultTriggerInterval = 10 * time.Second
)

// config holds what the options set. Defaults first, then the environment,
// then the options.
type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	modelName      string
	providers      []string
	attrs          []attribute.KeyValue
	profiling      Profiling
	nodeObserver   func(ProfiledNode)
}

// Profiling configures operator profiling. Operator timings exist only in
// ONNX Runtime's profiler, so profiling is off by default; when on, the
// selected runs are profiled and every operator becomes a child span of the
// run span it belongs to, at its true wall-clock time, emitted in the
// background once the run returned.
//
// Runs are selected by sampling (EveryN or Ratio), by a slow run (SlowRun:
// the next TailRuns runs), or on demand (ProfileRuns, TriggerProfiling).
// Every selected run is profiled, under concurrency too.
//
// On ONNX Runtime 1.25 and later a selected run goes through the session
// itself with run-level profiling switched on: a profiled run costs 1.07x an
// unprofiled one on PaddleOCR det (100 ms) but 5x on Silero VAD (0.1 ms), so
// profile short models rarely or on triggers. On 1.24 it goes through a profiled
// copy of the session (a window of at most WindowRuns runs or WindowAge),
// opened ahead of time, off the request path; that copy costs the memory of
// a second session, and its profiled runs cost 4-15x.
type Profiling struct {
	// EveryN profiles every Nth run (1 = every run). 0 disables it.
	EveryN int
	// Ratio profiles each run with this probability, 0 to 1. Used when EveryN is 0.
	Ratio float64
	// SlowRun, when positive, profiles the next TailRuns runs after a run
	// that took longer than this (a latency threshold or an SLA), at most
	// once per TriggerInterval. Default: off (ORTEL_PROFILE_SLOW_RUN).
	SlowRun time.Duration
	// TailRuns is how many runs a slow run or TriggerProfiling profiles
	// (default 5).
	TailRuns int
	// TriggerInterval is the least time between two accepted triggers, slow
	// runs and TriggerProfiling alike (default 10s).
	TriggerInterval time.Duration
	// WindowRuns caps the runs one profiled window holds on ONNX Runtime 1.24
	// (default 16), which bounds the profiler's memory to about
	// WindowRuns × nodes × 2.5 KB.
	WindowRuns int
	// WindowAge closes a 1.24 window this long after it opened (default 30s).
	WindowAge time.Duration
	// Dir is where ORT writes its profile files (default: a temporary
	// folder in memory, /dev/shm, where there is one: ORT writes a file per
	// profiled run, and on a disk creating it can cost more than the
	// profiling). Files are removed after they are read unless KeepFiles is
	// set. Overrides ORTEL_PROFILE_DIR.
	Dir string
	// KeepFiles keeps each profile JSON file in Dir.
	KeepFiles bool
	// MaxCPUShare, when positive, caps what profiling adds to the session's
	// CPU at this share of the time its runs take (0.02 = 2%): each profiled
	// run is charged its time beyond an unprofiled run plus the CPU spent
	// emitting its operator spans, and a run selected by EveryN or Ratio
	// waits, unprofiled, until the runs since paid for the last one. The
	// sampling interval thus lengthens to what the budget allows (at least
	// the configured one); ProfilingStats().EffectiveEveryN and the
	// ortel.profiling.interval attribute of profiled run spans report it.
	// Every run that is selected is still profiled in full. Runs owed to
	// triggers and ProfileRuns are never held back, only charged. On ONNX
	// Runtime 1.24 the profiled copy of the session each window opens is
	// not charged, only its runs and their emission.
	//
	// Default 0: no cap, EveryN and Ratio are exact. Set it where a
	// profiled run costs many unprofiled ones: on ONNX Runtime 1.30 ORT's
	// own per-run profiler adds about 0.5 ms to a run whatever the model,
	// and emitting its operator spans about 6 µs per operator, so 1 run in
	// 100 of a 0.1 ms model (Silero VAD) costs about +12% CPU; with
	// MaxCPUShare 0.02 it profiles about 1 run in 500 instead, for +1 to
	// +2.5% measured (the cap does not count the SDK's export and GC). On
	// models of milliseconds and more (PaddleOCR det) 1 in 100 stays under
	// 2% and the cap never acts. Overrides ORTEL_PROFILE_MAX_CPU_SHARE.
	MaxCPUShare float64
}

func (p Profiling) enabled() bool { return p.EveryN > 0 || p.Ratio > 0 || p.SlowRun > 0 }

// Option configures an instrumented session or pipeline.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTracerProvider sets the TracerProvider spans are created with.
// Default: the global provider (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) {
		if tp != nil {
			c.tracerProvider = tp
		}
	})
}

// WithMeterProvider sets the MeterProvider instruments are created with.
// Default: the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.meterProvider = mp
		}
	})
}

// WithModelName sets onnxruntime.model.name. Default: the model file's base
// name without its extension ("model" for sessions built from bytes).
func WithModelName(name string) Option {
	return optionFunc(func(c *config) {
		if name != "" {
			c.modelName = name
		}
	})
}

// WithExecutionProviders records the execution providers the session was
// asked to use, in priority order (the Go binding cannot read them back from
// the session options). Default: CPUExecutionProvider.
func WithExecutionProviders(providers ...string) Option {
	return optionFunc(func(c *config) {
		if len(providers) > 0 {
			c.providers = append([]string(nil), providers...)
		}
	})
}

// WithAttributes adds low-cardinality attributes (a model version, a
// deployment) to every span and metric of the session. Never put request ids,
// shapes or paths here: they would multiply the metric series.
func WithAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.attrs = append(c.attrs, attrs...) })
}

// WithProfiling turns operator profiling on with p. It overrides the
// ORTEL_PROFILE_* environment variables. Default: off.
func WithProfiling(p Profiling) Option {
	return optionFunc(func(c *config) { c.profiling = p })
}

// WithNodeObserver calls fn once for every operator of every profiled run,
// after its operator span was emitted. fn runs on a
// background goroutine; it must not block for long.
func WithNodeObserver(fn func(ProfiledNode)) Option {
	return optionFunc(func(c *config) { c.nodeObserver = fn })
}

// ModelName is the default onnxruntime.model.name of a model file: its base
// name without the extension ("det" for "models/det.onnx"), or "model" for
// a model held in memory (path "").
func ModelName(path string) string {
	if path == "" {
		return "model"
	}
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func newConfig(modelPath string, opts []Option) config {
	c := config{
		providers: []string{"CPUExecutionProvider"},
		profiling: envProfiling(),
	}
	c.modelName = ModelName(modelPath)
	for _, o := range opts {
		o.apply(&c)
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	if c.profiling.WindowRuns <= 0 {
		c.profiling.WindowRuns = DefaultWindowRuns
	}
	if c.profiling.WindowAge <= 0 {
		c.profiling.WindowAge = DefaultWindowAge
	}
	if c.profiling.TailRuns <= 0 {
		c.profiling.TailRuns = DefaultTailRuns
	}
	if c.profiling.TriggerInterval <= 0 {
		c.profiling.TriggerInterval = DefaultTriggerInterval
	}
	return c
}

// envProfiling reads the environment once per process, so a bad value is
// reported once.
var envProfiling = sync.OnceValue(profilingFromEnv)

// profilingFromEnv reads the ORTEL_PROFILE_* variables. A bad value is
// reported through otel.Handle and ignored; construction never fails on it.
func profilingFromEnv() Profiling {
	var p Profiling
	if v, ok := envInt(EnvProfileEvery); ok {
		p.EveryN = v
	}
	if v := os.Getenv(EnvProfileRatio); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			otel.Handle(fmt.Errorf("ortel: ignoring %s=%q: want a number from 0 to 1", EnvProfileRatio, v))
		} else {
			p.Ratio = f
		}
	}
	if v := os.Getenv(EnvProfileMaxCPUShare); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			otel.Handle(fmt.Errorf("ortel: ignoring %s=%q: want a number from 0 to 1", EnvProfileMaxCPUShare, v))
		} else {
			p.MaxCPUShare = f
		}
	}
	if v, ok := envInt(EnvProfileWindowRuns); ok {
		p.WindowRuns = v
	}
	if v := os.Getenv(EnvProfileSlowRun); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			otel.Handle(fmt.Errorf("ortel: ignoring %s=%q: want a duration such as 50ms", EnvProfileSlowRun, v))
		} else {
			p.SlowRun = d
		}
	}
	p.Dir = os.Getenv(EnvProfileDir)
	return p
}

func envInt(name string) (int, bool) {
	v := os.Getenv(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		otel.Handle(fmt.Errorf("ortel: ignoring %s=%q: want a whole number, 0 or more", name, v))
		return 0, false
	}
	return n, true
}
