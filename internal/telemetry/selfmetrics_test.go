package telemetry

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/semconv"
)

// selfMetrics collects ortel's metrics about its own telemetry through
// reader: sum by metric name and error.type ("" without one).
func selfMetrics(t *testing.T, reader *sdkmetric.ManualReader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != selfMeterName {
			continue
		}
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				t.Errorf("%s is %T, want a monotonic int64 sum", m.Name, m.Data)
				continue
			}
			out[m.Name] = map[string]int64{}
			for _, dp := range sum.DataPoints {
				v, _ := dp.Attributes.Value(attribute.Key("error.type"))
				out[m.Name][v.AsString()] += dp.Value
			}
		}
	}
	return out
}

// TestSelfMetricsSpooled: with the collector down and a spool, the spans
// and the metric export that failed are counted as spooled, as Stats
// counts them.
func TestSelfMetricsSpooled(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	reader := sdkmetric.NewManualReader()
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: t.TempDir(), Endpoint: "http://" + deadAddr(t), SpoolDir: filepath.Join(t.TempDir(), "spool"),
		MetricInterval: time.Hour, Readers: []sdkmetric.Reader{reader}})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(ctx)
	emit(t, tel)
	if err := tel.TracerProvider.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	_ = tel.MeterProvider.ForceFlush(ctx) // fails, into the spool
	got := selfMetrics(t, reader)
	st := tel.Stats()
	if st.SpansSpooled != 2 || st.MetricExportsSpooled < 1 {
		t.Fatalf("stats %+v, want 2 spans and a metric export spooled", st)
	}
	if v := got[semconv.OrtelTelemetrySpansSpooledName][""]; v != st.SpansSpooled {
		t.Errorf("%s = %d, want %d", semconv.OrtelTelemetrySpansSpooledName, v, st.SpansSpooled)
	}
	if v := got[semconv.OrtelTelemetryMetricExportsSpooledName][""]; v != st.MetricExportsSpooled {
		t.Errorf("%s = %d, want %d", semconv.OrtelTelemetryMetricExportsSpooledName, v, st.MetricExportsSpooled)
	}
	if d := got[semconv.OrtelTelemetrySpansDroppedName]; d["queue_full"] != 0 || d["export_failed"] != 0 {
		t.Errorf("%s = %v, want none: the spool took them", semconv.OrtelTelemetrySpansDroppedName, d)
	}
}
