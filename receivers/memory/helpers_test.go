//go:build linux

package memory

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// newTest creates a receiver on a fresh MeterProvider and returns a collect
// function.
func newTest(t *testing.T, opts ...Option) (*Receiver, func() (map[string]metricdata.Metrics, error)) {
	t.Helper()
	return procfstest.Start(t, func(mp metric.MeterProvider) (*Receiver, error) {
		return New(append([]Option{WithMeterProvider(mp)}, opts...)...)
	})
}

func ip(v int64, kv ...attribute.KeyValue) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(kv...), Value: v}
}

func fp(v float64, kv ...attribute.KeyValue) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Attributes: attribute.NewSet(kv...), Value: v}
}

var (
	used    = semconv.SystemMemoryStateUsed
	free    = semconv.SystemMemoryStateFree
	buffers = semconv.SystemMemoryStateBuffers
	cached  = semconv.SystemMemoryStateCached
	swUsed  = semconv.SystemPagingStateUsed
	swFree  = semconv.SystemPagingStateFree
	major   = semconv.SystemPagingFaultTypeMajor
	minor   = semconv.SystemPagingFaultTypeMinor
	in      = semconv.SystemPagingDirectionIn
	out     = semconv.SystemPagingDirectionOut
)
