package attach

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/configerr"
)

// ScopeName is the instrumentation scope of what attach emits.
const ScopeName = "github.com/ortel-dev/ortel/internal/attach"

// Config says what Start attaches to and where what it sees goes.
type Config struct {
	// PIDs are the processes to attach to (each must have ONNX Runtime
	// loaded).
	PIDs []int
	// Library attaches to every process, present and future, that maps the
	// ONNX Runtime library file at this path.
	Library string
	// TracerProvider receives the run spans; nil: the global one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the run metrics; nil: the global one.
	MeterProvider metric.MeterProvider
}

// withDefaults returns c with the global providers where it has none.
func (c Config) withDefaults() Config {
	if c.TracerProvider == nil {
		c.TracerProvider = otel.GetTracerProvider()
	}
	if c.MeterProvider == nil {
		c.MeterProvider = otel.GetMeterProvider()
	}
	return c
}

// Validate checks what c asks Start for, before anything is probed:
// something to attach to, and not both process ids and a library (a
// process that maps the library would be probed twice). Its errors name
// the fields as {PIDs} and {Library} (configerr). Start checks the same.
func (c Config) Validate() error {
	switch {
	case len(c.PIDs) == 0 && c.Library == "":
		return configerr.New("attach", "nothing to attach to: give {PIDs} (repeatable) or {Library}")
	case len(c.PIDs) > 0 && c.Library != "":
		return configerr.New("attach", "give {PIDs} or {Library}, not both (a process that maps the library would be probed twice)")
	}
	for _, pid := range c.PIDs {
		if pid <= 0 {
			return configerr.New("attach", "{PIDs} %d: want a process id, a whole number above 0", pid)
		}
	}
	return nil
}
