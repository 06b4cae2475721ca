package procfstest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/ortel-dev/ortel/semconv"
)

// NewProvider returns a MeterProvider with a ManualReader, shut down when
// the test ends.
func NewProvider(t testing.TB) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp, r
}

// Collect collects once and returns every metric by name, with the error
// the callbacks returned.
func Collect(t testing.TB, r *sdkmetric.ManualReader) (map[string]metricdata.Metrics, error) {
	t.Helper()
	return collect(t, r, "")
}

// CollectScope is Collect, and also checks that every metric comes from
// the instrumentation scope called scope.
func CollectScope(t testing.TB, r *sdkmetric.ManualReader, scope string) (map[string]metricdata.Metrics, error) {
	t.Helper()
	return collect(t, r, scope)
}

func collect(t testing.TB, r *sdkmetric.ManualReader, scope string) (map[string]metricdata.Metrics, error) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	err := r.Collect(context.Background(), &rm)
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if scope != "" && sm.Scope.Name != scope {
			t.Errorf("scope %q, want %q", sm.Scope.Name, scope)
		}
		for _, m := range sm.Metrics {
			if _, dup := out[m.Name]; dup {
				t.Errorf("metric %s appears twice", m.Name)
			}
			out[m.Name] = m
		}
	}
	return out, err
}

// AssertMetrics checks that got holds exactly the metrics in want, with
// the same points (timestamps aside).
func AssertMetrics(t testing.TB, got map[string]metricdata.Metrics, want ...metricdata.Metrics) {
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

// AssertNames checks that got holds the metrics called names and no
// others, whatever their points.
func AssertNames(t testing.TB, got map[string]metricdata.Metrics, names ...string) {
	t.Helper()
	if len(got) != len(names) {
		t.Errorf("got %d metrics, want %v", len(got), names)
	}
	for _, name := range names {
		if _, ok := got[name]; !ok {
			t.Errorf("%s missing", name)
		}
	}
}

// Sum returns the expected cumulative sum of the metric called name, with
// the unit and description the registry gives it.
func Sum[N int64 | float64](name string, monotonic bool, pts ...metricdata.DataPoint[N]) metricdata.Metrics {
	m, _ := semconv.LookupMetric(name)
	return metricdata.Metrics{Name: name, Description: m.Brief, Unit: m.Unit,
		Data: metricdata.Sum[N]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: monotonic, DataPoints: pts}}
}

// Gauge returns the expected gauge of the metric called name, with the
// unit and description the registry gives it.
func Gauge[N int64 | float64](name string, pts ...metricdata.DataPoint[N]) metricdata.Metrics {
	m, _ := semconv.LookupMetric(name)
	return metricdata.Metrics{Name: name, Description: m.Brief, Unit: m.Unit,
		Data: metricdata.Gauge[N]{DataPoints: pts}}
}

// Observer is a metric.Observer that only counts observations, to measure
// a callback's own cost and allocations without the SDK's.
type Observer struct {
	embedded.Observer
	N int
}

// ObserveFloat64 counts one observation.
func (o *Observer) ObserveFloat64(metric.Float64Observable, float64, ...metric.ObserveOption) { o.N++ }

// ObserveInt64 counts one observation.
func (o *Observer) ObserveInt64(metric.Int64Observable, int64, ...metric.ObserveOption) { o.N++ }
