//go:build linux

package memory

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

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

func ip(v int64, kv ...attribute.KeyValue) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(kv...), Value: v}
}

func fp(v float64, kv ...attribute.KeyValue) metricdata.DataPoint[float64] {
	return metricdata.DataPoint[float64]{Attributes: attribute.NewSet(kv...), Value: v}
}

func upDown(name string, pts ...metricdata.DataPoint[int64]) metricdata.Metrics {
	m, _ := semconv.LookupMetric(name)
	return metricdata.Metrics{Name: name, Description: m.Brief, Unit: m.Unit,
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: false, DataPoints: pts}}
}

func counter(name string, pts ...metricdata.DataPoint[int64]) metricdata.Metrics {
	m, _ := semconv.LookupMetric(name)
	return metricdata.Metrics{Name: name, Description: m.Brief, Unit: m.Unit,
		Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: pts}}
}

func gauge(name string, pts ...metricdata.DataPoint[float64]) metricdata.Metrics {
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
