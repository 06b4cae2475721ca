package instrument

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/test/testenv"
)

// providers are real SDK providers recording in memory.
type providers struct {
	tp     *sdktrace.TracerProvider
	spans  *tracetest.SpanRecorder
	mp     *sdkmetric.MeterProvider
	reader *sdkmetric.ManualReader
}

func newProviders(t testing.TB) *providers {
	t.Helper()
	p := &providers{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p.spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	p.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(p.reader))
	t.Cleanup(func() {
		p.tp.Shutdown(context.Background())
		p.mp.Shutdown(context.Background())
	})
	return p
}

func (p *providers) opts(extra ...Option) []Option {
	return append([]Option{WithTracerProvider(p.tp), WithMeterProvider(p.mp)}, extra...)
}

func (p *providers) collect(t testing.TB) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := p.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

// metricByName finds a metric in collected data.
func metricByName(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// histCount sums the count of a float64 histogram over its points matching
// filter (nil = all).
func histCount(t testing.TB, rm metricdata.ResourceMetrics, name string, filter func(attribute.Set) bool) uint64 {
	t.Helper()
	m, ok := metricByName(rm, name)
	if !ok {
		t.Fatalf("metric %s not recorded", name)
	}
	var n uint64
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			if filter == nil || filter(dp.Attributes) {
				n += dp.Count
			}
		}
	default:
		t.Fatalf("metric %s is %T, want a float64 histogram", name, m.Data)
	}
	return n
}

// int64Sum sums the points of an int64 sum metric.
func int64Sum(t testing.TB, rm metricdata.ResourceMetrics, name string) int64 {
	t.Helper()
	m, ok := metricByName(rm, name)
	if !ok {
		t.Fatalf("metric %s not recorded", name)
	}
	d, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("metric %s is %T, want an int64 sum", name, m.Data)
	}
	var n int64
	for _, dp := range d.DataPoints {
		n += dp.Value
	}
	return n
}

// chainModel writes a MatMul+Add chain model and returns its path.
func chainModel(t testing.TB, layers, dim int) string {
	t.Helper()
	testenv.RequireORT(t)
	path := filepath.Join(t.TempDir(), "chain.onnx")
	if err := onnxgen.MatMulAddChain(layers, dim).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// chainSession opens an instrumented session on a chain model, with one
// input tensor of ones.
func chainSession(t testing.TB, p *providers, layers, dim int, opts ...Option) (*DynamicSession, []ort.Value, []ort.Value) {
	t.Helper()
	path := chainModel(t, layers, dim)
	s, err := NewDynamicSession(context.Background(), path, []string{"x"}, []string{"y"}, nil, p.opts(opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]float32, dim)
	for i := range data {
		data[i] = 1
	}
	in, err := ort.NewTensor(ort.NewShape(1, int64(dim)), data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(dim)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close(context.Background())
		in.Destroy()
		out.Destroy()
	})
	return s, []ort.Value{in}, []ort.Value{out}
}

// attrs turns span attributes into a map.
func attrs(kvs []attribute.KeyValue) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value
	}
	return m
}

// spansNamed returns the ended spans whose name is name.
func spansNamed(rec *tracetest.SpanRecorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// childrenOf indexes ended spans by parent span id.
func childrenOf(rec *tracetest.SpanRecorder) map[trace.SpanID][]sdktrace.ReadOnlySpan {
	m := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if s.Parent().IsValid() {
			m[s.Parent().SpanID()] = append(m[s.Parent().SpanID()], s)
		}
	}
	return m
}

type ortValue = ort.Value

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
