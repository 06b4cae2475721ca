package instrument

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/semconv"
)

// instruments are created once per session at construction (the run
// counters, shared by sessions, in counters.go), with the names,
// units, descriptions and advised bucket boundaries of the semconv registry.
// The views package makes the histograms base-2 exponential on the SDK side.
type instruments struct {
	runDuration     metric.Float64Histogram
	runErrors       metric.Int64Counter
	nodeDuration    metric.Float64Histogram
	sessionCreation metric.Float64Histogram
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var e [4]error
	in.runDuration, e[0] = semconv.NewOnnxruntimeRunDuration(m)
	in.runErrors, e[1] = semconv.NewOnnxruntimeRunErrors(m)
	in.nodeDuration, e[2] = semconv.NewOnnxruntimeNodeDuration(m)
	in.sessionCreation, e[3] = semconv.NewOnnxruntimeSessionCreationDuration(m)
	return &in, errors.Join(e[:]...)
}
