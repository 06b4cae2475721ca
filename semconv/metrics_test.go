package semconv_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/semconv"
)

// collect creates every registered instrument through its generated
// constructor on an SDK meter, records one value on each and returns what a
// ManualReader reads back, by instrument name.
func collect(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m := mp.Meter("semconv_test")
	for _, it := range instrumentTests {
		if err := it.create(ctx, m); err != nil {
			t.Fatalf("create %s: %v", it.name, err)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	got := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, md := range sm.Metrics {
			got[md.Name] = md
		}
	}
	return got
}

func TestConstructorsCreateRegisteredInstruments(t *testing.T) {
	if len(instrumentTests) != len(semconv.Metrics) {
		t.Fatalf("%d constructor tests for %d metrics", len(instrumentTests), len(semconv.Metrics))
	}
	got := collect(t)
	for _, want := range semconv.Metrics {
		t.Run(want.Name, func(t *testing.T) {
			md, ok := got[want.Name]
			if !ok {
				t.Fatalf("no data for %s", want.Name)
			}
			if md.Unit != want.Unit {
				t.Errorf("unit = %q, want %q", md.Unit, want.Unit)
			}
			if md.Description != want.Brief {
				t.Errorf("description = %q, want %q", md.Description, want.Brief)
			}
			if kind := dataKind(md.Data); kind != sdkKind(want) {
				t.Errorf("data = %s, want %s (registry kind %s)", kind, sdkKind(want), want.Kind)
			}
			if len(want.Buckets) > 0 {
				var bounds []float64
				switch h := md.Data.(type) {
				case metricdata.Histogram[float64]:
					if len(h.DataPoints) == 1 {
						bounds = h.DataPoints[0].Bounds
					}
				case metricdata.Histogram[int64]:
					if len(h.DataPoints) == 1 {
						bounds = h.DataPoints[0].Bounds
					}
				}
				if bounds == nil {
					t.Fatalf("want one histogram point, got %T", md.Data)
				}
				if !slices.Equal(bounds, want.Buckets) {
					t.Errorf("bounds = %v, want %v", bounds, want.Buckets)
				}
			}
		})
	}
}

// sdkKind is the aggregation the SDK produces by default for a registered
// metric's instrument.
func sdkKind(m semconv.Metric) string {
	num := "int64"
	if m.ValueType == "double" {
		num = "float64"
	}
	switch m.Instrument {
	case "counter":
		return "monotonic sum " + num
	case "updowncounter":
		return "non-monotonic sum " + num
	case "gauge":
		return "gauge " + num
	default:
		return "histogram " + num
	}
}

func dataKind(d metricdata.Aggregation) string {
	switch v := d.(type) {
	case metricdata.Sum[int64]:
		return monotonic(v.IsMonotonic) + "sum int64"
	case metricdata.Sum[float64]:
		return monotonic(v.IsMonotonic) + "sum float64"
	case metricdata.Gauge[int64]:
		return "gauge int64"
	case metricdata.Gauge[float64]:
		return "gauge float64"
	case metricdata.Histogram[int64]:
		return "histogram int64"
	case metricdata.Histogram[float64]:
		return "histogram float64"
	}
	return "unknown"
}

func monotonic(b bool) string {
	if b {
		return "monotonic "
	}
	return "non-monotonic "
}

// TestRunDurationInstrument checks one constructor against values written
// out by hand, independent of the registry tables.
func TestRunDurationInstrument(t *testing.T) {
	md, ok := collect(t)["onnxruntime.run.duration"]
	if !ok {
		t.Fatal("onnxruntime.run.duration not collected")
	}
	if md.Unit != "s" {
		t.Errorf("unit = %q, want s", md.Unit)
	}
	h, ok := md.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("data is %T, want a float64 histogram", md.Data)
	}
	if b := h.DataPoints[0].Bounds; len(b) == 0 || b[0] >= 0.005 {
		t.Errorf("bounds = %v, want sub-5ms buckets for inference latency", b)
	}
}

func TestConstructorOptionsOverrideDefaults(t *testing.T) {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(ctx) }()
	h, err := semconv.NewOnnxruntimeRunDuration(mp.Meter("t"),
		metric.WithExplicitBucketBoundaries(1, 2),
		metric.WithDescription("custom"))
	if err != nil {
		t.Fatal(err)
	}
	h.Record(ctx, 0.5)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	md := rm.ScopeMetrics[0].Metrics[0]
	if md.Description != "custom" {
		t.Errorf("description = %q, want the caller's", md.Description)
	}
	if b := md.Data.(metricdata.Histogram[float64]).DataPoints[0].Bounds; !slices.Equal(b, []float64{1, 2}) {
		t.Errorf("bounds = %v, want the caller's [1 2]", b)
	}
	if md.Unit != semconv.OnnxruntimeRunDurationUnit {
		t.Errorf("unit = %q, want %q", md.Unit, semconv.OnnxruntimeRunDurationUnit)
	}
}
