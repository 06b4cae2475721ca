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

// TestSelfMetricsQueueFull: with the collector hung, spans that meet a
// full queue are exported as ortel.telemetry.spans.dropped{error.type=
// queue_full}, the same count as Stats; with no spool, nothing is said to
// be spooled.
func TestSelfMetricsQueueFull(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "64")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "3600000")
	r := startReceiver(t)
	r.SetDelay(time.Hour)
	reader := sdkmetric.NewManualReader()
	tel, err := Setup(testContext(t), Config{Endpoint: "http://" + r.Endpoint(), ShutdownTimeout: 200 * time.Millisecond,
		MetricInterval: time.Hour, Readers: []sdkmetric.Reader{reader}})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown(t.Context())
	tr := tel.TracerProvider.Tracer("test")
	for range 2000 {
		_, s := tr.Start(t.Context(), "op")
		s.End()
	}
	got := selfMetrics(t, reader)
	st := tel.Stats()
	if st.SpansQueueFull == 0 {
		t.Fatalf("no span met a full queue: %+v", st)
	}
	if d := got[semconv.OrtelTelemetrySpansDroppedName]; d["queue_full"] != st.SpansQueueFull || d["export_failed"] != st.SpansDropped-st.SpansQueueFull {
		t.Errorf("%s = %v, want queue_full %d, export_failed %d (Stats %+v)", semconv.OrtelTelemetrySpansDroppedName, d, st.SpansQueueFull, st.SpansDropped-st.SpansQueueFull, st)
	}
	for _, name := range []string{semconv.OrtelTelemetrySpansSpooledName, semconv.OrtelTelemetryMetricExportsSpooledName} {
		if _, ok := got[name]; ok {
			t.Errorf("%s exported with no spool", name)
		}
	}
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
