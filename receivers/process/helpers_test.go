//go:build linux

package process

import (
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

var pageSize = int64(os.Getpagesize())

// newTest creates a receiver on a fresh MeterProvider and returns a collect
// function.
func newTest(t *testing.T, opts ...Option) (*Receiver, func() (map[string]metricdata.Metrics, error)) {
	t.Helper()
	return procfstest.Start(t, func(mp metric.MeterProvider) (*Receiver, error) {
		return New(append([]Option{WithMeterProvider(mp)}, opts...)...)
	})
}

// fakeClock returns a clock that starts at a fixed time and the function
// that moves it on.
func fakeClock() (func() time.Time, func(time.Duration)) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { return now }, func(d time.Duration) { now = now.Add(d) }
}

func ip(v int64, pid int, kv ...attribute.KeyValue) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(append(kv, semconv.ProcessPID(pid))...), Value: v}
}

func fp(v float64, pid int, kv ...attribute.KeyValue) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Attributes: attribute.NewSet(append(kv, semconv.ProcessPID(pid))...), Value: v}
}

// pidsOf returns the process.pid values of a metric's points.
func pidsOf(m metricdata.Metrics) map[int64]bool {
	out := map[int64]bool{}
	for _, s := range procfstest.PointAttributes(m) {
		if v, ok := s.Value(semconv.ProcessPIDKey); ok {
			out[v.AsInt64()] = true
		}
	}
	return out
}

var (
	user    = semconv.CPUModeUser
	system  = semconv.CPUModeSystem
	vol     = semconv.ProcessContextSwitchTypeVoluntary
	invol   = semconv.ProcessContextSwitchTypeInvoluntary
	major   = semconv.SystemPagingFaultTypeMajor
	minor   = semconv.SystemPagingFaultTypeMinor
	ioRead  = semconv.DiskIODirectionRead
	ioWrite = semconv.DiskIODirectionWrite
)
