package telemetry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/otlptest"
)

var (
	t0 = time.Unix(1700000000, 123456789)
	t1 = t0.Add(10 * time.Second)
)

// handmadeMetrics holds every metricdata kind, both number types, both
// temporalities, exemplars, min/max set and unset, and every attribute
// value type.
func handmadeMetrics() *metricdata.ResourceMetrics {
	attrs := attribute.NewSet(
		attribute.String("s", "v"), attribute.Bool("b", true), attribute.Int64("i", -3), attribute.Float64("f", 0.5),
		attribute.StringSlice("ss", []string{"a", "b"}), attribute.BoolSlice("bs", []bool{true, false}),
		attribute.Int64Slice("is", []int64{1, 2}), attribute.Float64Slice("fs", []float64{1.5}),
		attribute.ByteSlice("raw", []byte{0, 1, 0xff}),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.IntValue(1)),
		attribute.Map("m", attribute.String("k", "v"), attribute.Int("n", 2)),
	)
	other := attribute.NewSet(attribute.String("onnxruntime.model.name", "det"))
	tid := [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid := [8]byte{9, 8, 7, 6, 5, 4, 3, 2}
	exF := []metricdata.Exemplar[float64]{{FilteredAttributes: []attribute.KeyValue{attribute.String("user", "x")}, Time: t1, Value: 0.25, TraceID: tid[:], SpanID: sid[:]}}
	exI := []metricdata.Exemplar[int64]{{Time: t1, Value: 7, TraceID: tid[:], SpanID: sid[:]}}
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.43.0", attribute.String("service.name", "fidelity"), attribute.String("host.name", "h"))
	return &metricdata.ResourceMetrics{
		Resource: res,
		ScopeMetrics: []metricdata.ScopeMetrics{
			{
				Scope: instrumentation.Scope{Name: "scope.a", Version: "1.0", SchemaURL: "https://example.com/schema", Attributes: attribute.NewSet(attribute.String("scope.attr", "x"))},
				Metrics: []metricdata.Metrics{
					{Name: "gauge.int", Unit: "1", Description: "d", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Attributes: attrs, Time: t1, Value: 42, Exemplars: exI}}}},
					{Name: "gauge.float", Unit: "Cel", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Attributes: other, StartTime: t0, Time: t1, Value: 41.5}}}},
					{Name: "sum.int", Unit: "{run}", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: []metricdata.DataPoint[int64]{
						{Attributes: other, StartTime: t0, Time: t1, Value: 1 << 40, Exemplars: exI},
						{StartTime: t0, Time: t1, Value: 0},
					}}},
					{Name: "sum.float.delta", Unit: "J", Data: metricdata.Sum[float64]{Temporality: metricdata.DeltaTemporality, DataPoints: []metricdata.DataPoint[float64]{{StartTime: t0, Time: t1, Value: -2.5, Exemplars: exF}}}},
				},
			},
			{
				Scope: instrumentation.Scope{Name: "scope.b"},
				Metrics: []metricdata.Metrics{
					{Name: "hist.float", Unit: "s", Data: metricdata.Histogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.HistogramDataPoint[float64]{{
						Attributes: other, StartTime: t0, Time: t1, Count: 3, Bounds: []float64{0.1, 1}, BucketCounts: []uint64{1, 1, 1},
						Min: metricdata.NewExtrema(0.05), Max: metricdata.NewExtrema(2.0), Sum: 2.6, Exemplars: exF,
					}}}},
					{Name: "hist.int.nominmax", Unit: "By", Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality, DataPoints: []metricdata.HistogramDataPoint[int64]{{
						StartTime: t0, Time: t1, Count: 2, Bounds: []float64{10}, BucketCounts: []uint64{1, 1}, Sum: 30,
					}}}},
					{Name: "exphist.float", Unit: "s", Data: metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality, DataPoints: []metricdata.ExponentialHistogramDataPoint[float64]{{
						Attributes: other, StartTime: t0, Time: t1, Count: 5, Min: metricdata.NewExtrema(-1.0), Max: metricdata.NewExtrema(8.0), Sum: 12,
						Scale: 2, ZeroCount: 1, ZeroThreshold: 1e-9,
						PositiveBucket: metricdata.ExponentialBucket{Offset: -2, Counts: []uint64{1, 0, 2}},
						NegativeBucket: metricdata.ExponentialBucket{Offset: 1, Counts: []uint64{1}},
						Exemplars:      exF,
					}}}},
					{Name: "exphist.int", Unit: "By", Data: metricdata.ExponentialHistogram[int64]{Temporality: metricdata.DeltaTemporality, DataPoints: []metricdata.ExponentialHistogramDataPoint[int64]{{
						StartTime: t0, Time: t1, Count: 1, Sum: 4, Scale: 0, PositiveBucket: metricdata.ExponentialBucket{Offset: 1, Counts: []uint64{1}},
					}}}},
					{Name: "summary", Unit: "s", Data: metricdata.Summary{DataPoints: []metricdata.SummaryDataPoint{{
						Attributes: other, StartTime: t0, Time: t1, Count: 4, Sum: 10,
						QuantileValues: []metricdata.QuantileValue{{Quantile: 0, Value: 1}, {Quantile: 0.5, Value: 2}, {Quantile: 1, Value: 4}},
					}}}},
					{Name: "empty.sum", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality}},
				},
			},
		},
	}
}

// sdkMetrics collects real instruments of every kind through the SDK,
// with exemplars from a sampled span and an exponential histogram view.
func sdkMetrics(t *testing.T) *metricdata.ResourceMetrics {
	t.Helper()
	ctx := t.Context()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(
		sdkmetric.WithReader(reader),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "sdk"))),
		sdkmetric.WithView(sdkmetric.NewView(
			sdkmetric.Instrument{Name: "onnxruntime.node.duration"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}},
		)),
	)
	defer func() { _ = mp.Shutdown(ctx) }()
	tp := sdktrace.NewTracerProvider()
	sctx, span := tp.Tracer("t").Start(ctx, "run")
	defer span.End()

	m := mp.Meter("github.com/ortel-dev/ortel/instrument", metric.WithInstrumentationVersion("0.1.0"))
	attrs := metric.WithAttributes(attribute.String("onnxruntime.model.name", "det"))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := m.Int64Counter("onnxruntime.run.errors", metric.WithUnit("{error}"))
	must(err)
	c.Add(sctx, 2, attrs)
	fc, err := m.Float64Counter("hw.energy", metric.WithUnit("J"))
	must(err)
	fc.Add(sctx, 1.5)
	ud, err := m.Int64UpDownCounter("onnxruntime.run.active", metric.WithUnit("{run}"))
	must(err)
	ud.Add(sctx, -1, attrs)
	h, err := m.Float64Histogram("onnxruntime.run.duration", metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(0.001, 0.01, 0.1))
	must(err)
	for _, v := range []float64{0.0005, 0.004, 0.05, 0.5} {
		h.Record(sctx, v, attrs)
	}
	eh, err := m.Float64Histogram("onnxruntime.node.duration", metric.WithUnit("s"))
	must(err)
	for _, v := range []float64{1e-6, 2e-5, 3e-4, 3e-4} {
		eh.Record(sctx, v, attrs)
	}
	ih, err := m.Int64Histogram("ortel.bytes", metric.WithUnit("By"))
	must(err)
	ih.Record(sctx, 1024)
	g, err := m.Float64Gauge("hw.temperature", metric.WithUnit("Cel"))
	must(err)
	g.Record(sctx, 55.5)
	og, err := m.Int64ObservableGauge("process.thread.count", metric.WithUnit("{thread}"))
	must(err)
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(og, 12)
		return nil
	}, og)
	must(err)

	var rm metricdata.ResourceMetrics
	must(reader.Collect(ctx, &rm))
	return &rm
}

// TestFileMetricsMatchOTLPExporter exports the same data through the SDK's
// OTLP/gRPC metric exporter into an in-process receiver and through the
// file exporter into a file, reads the file back, and compares: the two
// must be the same protobuf messages, field for field.
func TestFileMetricsMatchOTLPExporter(t *testing.T) {
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := testContext(t)
	grpcExp, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(r.Endpoint()), otlpmetricgrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = grpcExp.Shutdown(ctx) }()

	tests := []struct {
		name string
		rm   *metricdata.ResourceMetrics
	}{
		{"every kind by hand", handmadeMetrics()},
		{"collected by the SDK", sdkMetrics(t)},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := grpcExp.Export(ctx, tt.rm); err != nil {
				t.Fatal(err)
			}
			if err := r.WaitMetrics(ctx, func(r *otlptest.Receiver) bool { return len(r.ResourceMetrics()) > i }); err != nil {
				t.Fatal(err)
			}
			want := r.ResourceMetrics()[i]

			path := filepath.Join(t.TempDir(), "metrics.jsonl")
			sink, err := openSink(path)
			if err != nil {
				t.Fatal(err)
			}
			fileExp := fileMetricExporter{sink: sink}
			if err := fileExp.Export(ctx, tt.rm); err != nil {
				t.Fatal(err)
			}
			if err := fileExp.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			got := readMetricsFile(t, path)
			if len(got) != 1 || len(got[0].GetResourceMetrics()) != 1 {
				t.Fatalf("file holds %d requests, want 1 with 1 ResourceMetrics", len(got))
			}
			if !proto.Equal(got[0].GetResourceMetrics()[0], want) {
				t.Errorf("file exporter differs from the OTLP exporter:\nfile: %v\notlp: %v", got[0].GetResourceMetrics()[0], want)
			}
			if countMetrics(want) < 5 || countExemplars(want) == 0 {
				t.Errorf("only %d metrics and %d exemplars compared; the test data is not what it should be", countMetrics(want), countExemplars(want))
			}
		})
	}
}

func countMetrics(rm *metricspb.ResourceMetrics) int {
	n := 0
	for _, sm := range rm.GetScopeMetrics() {
		n += len(sm.GetMetrics())
	}
	return n
}

// countExemplars counts exemplars with a trace id.
func countExemplars(rm *metricspb.ResourceMetrics) int {
	n := 0
	count := func(exs []*metricspb.Exemplar) {
		for _, e := range exs {
			if len(e.GetTraceId()) == 16 {
				n++
			}
		}
	}
	for _, sm := range rm.GetScopeMetrics() {
		for _, m := range sm.GetMetrics() {
			for _, p := range m.GetSum().GetDataPoints() {
				count(p.GetExemplars())
			}
			for _, p := range m.GetGauge().GetDataPoints() {
				count(p.GetExemplars())
			}
			for _, p := range m.GetHistogram().GetDataPoints() {
				count(p.GetExemplars())
			}
			for _, p := range m.GetExponentialHistogram().GetDataPoints() {
				count(p.GetExemplars())
			}
		}
	}
	return n
}

func readMetricsFile(t *testing.T, path string) []*colmetricspb.ExportMetricsServiceRequest {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*colmetricspb.ExportMetricsServiceRequest
	err = otlpjson.ReadMetrics(f, func(req *colmetricspb.ExportMetricsServiceRequest) error {
		out = append(out, req)
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return out
}

func TestTransformKeepsGoodMetricsOnError(t *testing.T) {
	rm := &metricdata.ResourceMetrics{
		Resource: resource.Empty(),
		ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{
			{Name: "bad.temporality", Data: metricdata.Sum[int64]{Temporality: metricdata.Temporality(99)}},
			{Name: "good", Data: metricdata.Gauge[int64]{DataPoints: []metricdata.DataPoint[int64]{{Value: 1}}}},
			{Name: "unknown.kind", Data: nil},
		}}},
	}
	pb, err := resourceMetricsToProto(rm)
	if err == nil || !strings.Contains(err.Error(), `"bad.temporality"`) || !strings.Contains(err.Error(), `"unknown.kind"`) {
		t.Fatalf("error = %v, want one naming both bad metrics", err)
	}
	if ms := pb.GetScopeMetrics()[0].GetMetrics(); len(ms) != 1 || ms[0].GetName() != "good" {
		t.Errorf("converted %v, want only the good metric", ms)
	}

	// The file exporter writes the good part and reports the rest.
	path := filepath.Join(t.TempDir(), "m.jsonl")
	sink, err := openSink(path)
	if err != nil {
		t.Fatal(err)
	}
	exp := fileMetricExporter{sink: sink}
	if err := exp.Export(t.Context(), rm); err == nil {
		t.Error("Export hid the conversion error")
	}
	_ = exp.Shutdown(t.Context())
	got := readMetricsFile(t, path)
	if len(got) != 1 || countMetrics(got[0].GetResourceMetrics()[0]) != 1 {
		t.Errorf("file holds %v, want the one good metric", got)
	}
	if err := exp.Export(t.Context(), rm); !errors.Is(err, errSinkClosed) {
		t.Errorf("Export after Shutdown = %v, want errSinkClosed", err)
	}
}
