package attach

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/configerr"
)

// ScopeName is the instrumentation scope of what attach emits.
const ScopeName = "github.com/ortel-dev/ortel/internal/attach"

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	pids []int
	lib  string
}

// Option configures Start.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithTracerProvider sets where run spans go. Default: the global one.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithMeterProvider sets where the run metrics go. Default: the global one.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.mp = mp })
}

// WithPIDs attaches to these processes (each must have ONNX Runtime
// loaded). Repeatable; no default.
func WithPIDs(pids ...int) Option {
	return optionFunc(func(c *config) { c.pids = append(c.pids, pids...) })
}

// WithLibrary attaches to every process, present and future, that maps
// the ONNX Runtime library file at path. No default.
func WithLibrary(path string) Option {
	return optionFunc(func(c *config) { c.lib = path })
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	return c
}

// Validate checks what opts ask Start for, before anything is probed:
// something to attach to, and not both process ids and a library (a
// process that maps the library would be probed twice). Its errors name
// the options as {PIDs} and {Library} (configerr). Start checks the same.
func Validate(opts ...Option) error {
	return newConfig(opts).validate()
}

func (c config) validate() error {
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
