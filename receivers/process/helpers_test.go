//go:build linux

package process

import (
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

var pageSize = int64(os.Getpagesize())

func newTest(t *testing.T, opts ...Option) (*Receiver, func() (map[string]metricdata.Metrics, error)) {
	t.Helper()
	mp, reader := procfstest.NewProvider(t)
	r, err := New(append([]Option{WithMeterProvider(mp)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Shutdown(t.Context()) })
	return r, func() (map[string]metricdata.Metrics, error) { return procfstest.Collect(t, reader) }
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

func isum(name string, monotonic bool, pts ...metricdata.DataPoint[int64]) metricdata.Metrics {
	m, _ := semconv.LookupMetric(name)
	return metricdata.Metrics{Name: name, Description: m.Brief, Unit: m.Unit,
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: monotonic, DataPoints: pts}}
}

func fsum(name string, pts ...metricdata.DataPoint[float64]) metricdata.Metrics {
	m, _ := semconv.LookupMetric(name)
	return metricdata.Metrics{Name: name, Description: m.Brief, Unit: m.Unit,
		Data: metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: pts}}
}

func fgauge(name string, pts ...metricdata.DataPoint[float64]) metricdata.Metrics {
	m, _ := semconv.LookupMetric(name)
	return metricdata.Metrics{Name: name, Description: m.Brief, Unit: m.Unit,
		Data: metricdata.Gauge[float64]{DataPoints: pts}}
}

// assertMetrics checks that got holds exactly the metrics in want.
func assertMetrics(t *testing.T, got map[string]metricdata.Metrics, want ...metricdata.Metrics) {
	t.Helper()
	names := map[string]bool{}
	for _, w := range want {
		names[w.Name] = true
		g, ok := got[w.Name]
		if !ok {
			t.Errorf("metric %s missing", w.Name)
			continue
		}
		metricdatatest.AssertEqual(t, w, g, metricdatatest.IgnoreTimestamp())
	}
	for name := range got {
		if !names[name] {
			t.Errorf("unexpected metric %s: %+v", name, got[name].Data)
		}
	}
}

// pidsOf returns the process.pid values of a metric's points.
func pidsOf(m metricdata.Metrics) map[int64]bool {
	out := map[int64]bool{}
	add := func(s attribute.Set) {
		if v, ok := s.Value(semconv.ProcessPIDKey); ok {
			out[v.AsInt64()] = true
		}
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes)
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
