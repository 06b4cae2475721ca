package views

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func collect(t *testing.T, views []sdkmetric.View) metricdata.Aggregation {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r), sdkmetric.WithView(views...))
	h, err := mp.Meter("t").Float64Histogram("onnxruntime.run.duration",
		metric.WithExplicitBucketBoundaries(0.001, 0.01, 0.1))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []float64{0.002, 0.004, 0.02} {
		h.Record(context.Background(), v)
	}
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm.ScopeMetrics[0].Metrics[0].Data
}

func TestViews(t *testing.T) {
	tests := []struct {
		name        string
		env         string
		exponential bool
	}{
		{"default is exponential", "", true},
		{"explicit asked", "explicit_bucket_histogram", false},
		{"explicit asked, other case", " EXPLICIT_BUCKET_HISTOGRAM ", false},
		{"exponential asked", "base2_exponential_bucket_histogram", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvHistogramAggregation, tt.env)
			data := collect(t, FromEnv())
			switch d := data.(type) {
			case metricdata.ExponentialHistogram[float64]:
				if !tt.exponential {
					t.Fatalf("got an exponential histogram, want explicit buckets")
				}
				if d.DataPoints[0].Count != 3 {
					t.Errorf("count = %d, want 3", d.DataPoints[0].Count)
				}
			case metricdata.Histogram[float64]:
				if tt.exponential {
					t.Fatalf("got explicit buckets, want an exponential histogram")
				}
				if got := d.DataPoints[0].Bounds; len(got) != 3 {
					t.Errorf("bounds = %v, want the advised 3 boundaries", got)
				}
			default:
				t.Fatalf("unexpected aggregation %T", data)
			}
		})
	}
}
