package instrument

import (
	"errors"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/semconv"
)

// instruments are created once per session at construction, with the names,
// units, descriptions and advised bucket boundaries of the semconv registry.
// The views package makes the histograms base-2 exponential on the SDK side.
type instruments struct {
	runDuration     metric.Float64Histogram
	runErrors       metric.Int64Counter
	runs            metric.Int64ObservableCounter
	active          metric.Int64ObservableUpDownCounter
	nodeDuration    metric.Float64Histogram
	sessionCreation metric.Float64Histogram
}

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var e [6]error
	in.runDuration, e[0] = semconv.NewOnnxruntimeRunDuration(m)
	in.runErrors, e[1] = semconv.NewOnnxruntimeRunErrors(m)
	in.runs, e[2] = semconv.NewOnnxruntimeRuns(m)
	in.active, e[3] = semconv.NewOnnxruntimeRunActive(m)
	in.nodeDuration, e[4] = semconv.NewOnnxruntimeNodeDuration(m)
	in.sessionCreation, e[5] = semconv.NewOnnxruntimeSessionCreationDuration(m)
	return &in, errors.Join(e[:]...)
}
