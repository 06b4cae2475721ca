package otlptest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func start(t *testing.T) *Receiver {
	t.Helper()
	r, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// client returns raw gRPC clients of both services, connected to r.
func client(t *testing.T, r *Receiver) (coltracepb.TraceServiceClient, colmetricspb.MetricsServiceClient) {
	t.Helper()
	conn, err := grpc.NewClient(r.Endpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return coltracepb.NewTraceServiceClient(conn), colmetricspb.NewMetricsServiceClient(conn)
}

func oneSpan(name string) *coltracepb.ExportTraceServiceRequest {
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: name, SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}}}}},
	}}}
}

func TestEndpointIsLoopback(t *testing.T) {
	r := start(t)
	if !strings.HasPrefix(r.Endpoint(), "127.0.0.1:") || strings.HasSuffix(r.Endpoint(), ":0") {
		t.Errorf("Endpoint() = %q, want 127.0.0.1:<port>", r.Endpoint())
	}
}

func TestWithAddress(t *testing.T) {
	r := start(t)
	tests := []struct {
		name    string
		addr    string
		wantErr string
	}{
		{"explicit loopback", "127.0.0.1:0", ""},
		{"port in use", r.Endpoint(), r.Endpoint()},
		{"not an address", "no-such-host.invalid:xyz", "no-such-host.invalid:xyz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r2, err := Start(WithAddress(tt.addr))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				_ = r2.Close()
				return
			}
			if err == nil {
				_ = r2.Close()
				t.Fatalf("Start(%q) succeeded", tt.addr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not name the address %q", err, tt.wantErr)
			}
		})
	}
}

// TestOTLPTraceGRPCExporter sends real spans through the SDK's OTLP/gRPC
// trace exporter.
func TestOTLPTraceGRPCExporter(t *testing.T) {
	r := start(t)
	ctx := testContext(t)
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(r.Endpoint()), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithHeaders(map[string]string{"x-tenant": "acme"}))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", "otlptest-svc"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
	tr := tp.Tracer("otlptest.scope")
	pctx, parent := tr.Start(ctx, "parent")
	_, child := tr.Start(pctx, "child", trace.WithAttributes(
		attribute.String("s", "v"), attribute.Int("i", 42), attribute.Float64("f", 0.5),
		attribute.Bool("b", true), attribute.StringSlice("ss", []string{"a", "b"}),
	))
	child.End()
	parent.End()
	if err := r.WaitSpans(ctx, HasSpans(2)); err != nil {
		t.Fatal(err)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	spans := r.Spans()
	p := SpansNamed(spans, "parent")
	c := SpansNamed(spans, "child")
	if len(p) != 1 || len(c) != 1 {
		t.Fatalf("got spans %v", spans)
	}
	if got, want := c[0].ParentSpanID(), parent.SpanContext().SpanID().String(); got != want {
		t.Errorf("child's parent = %s, want %s", got, want)
	}
	if got, want := c[0].TraceID(), parent.SpanContext().TraceID().String(); got != want {
		t.Errorf("child's trace = %s, want %s", got, want)
	}
	if kids := Children(spans, p[0]); len(kids) != 1 || kids[0].GetName() != "child" {
		t.Errorf("Children(parent) = %v", kids)
	}
	if s, ok := SpanByID(spans, strings.ToUpper(child.SpanContext().SpanID().String())); !ok || s.GetName() != "child" {
		t.Errorf("SpanByID(child id) = %v, %v", s.GetName(), ok)
	}
	if got := c[0].ServiceName(); got != "otlptest-svc" {
		t.Errorf("service.name = %q", got)
	}
	if got := c[0].Scope.GetName(); got != "otlptest.scope" {
		t.Errorf("scope = %q", got)
	}
	attrs := c[0].GetAttributes()
	if v, ok := AttrString(attrs, "s"); !ok || v != "v" {
		t.Errorf("s = %q, %v", v, ok)
	}
	if v, ok := AttrInt(attrs, "i"); !ok || v != 42 {
		t.Errorf("i = %d, %v", v, ok)
	}
	if v, ok := AttrFloat(attrs, "f"); !ok || v != 0.5 {
		t.Errorf("f = %v, %v", v, ok)
	}
	if v, ok := AttrBool(attrs, "b"); !ok || !v {
		t.Errorf("b = %v, %v", v, ok)
	}
	if v, ok := AttrStrings(attrs, "ss"); !ok || strings.Join(v, ",") != "a,b" {
		t.Errorf("ss = %v, %v", v, ok)
	}
	if got := r.Headers().Get("x-tenant"); len(got) != 1 || got[0] != "acme" {
		t.Errorf("Headers()[x-tenant] = %v, want [acme]", got)
	}
	if tr, m := r.Requests(); tr < 2 || m != 0 {
		t.Errorf("Requests() = %d, %d; want >= 2 trace calls (one per span with a syncer), 0 metric calls", tr, m)
	}
}

// TestOTLPMetricGRPCExporter sends real metrics through the SDK's OTLP/gRPC
// metric exporter.
func TestOTLPMetricGRPCExporter(t *testing.T) {
	r := start(t)
	ctx := testContext(t)
	exp, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(r.Endpoint()), otlpmetricgrpc.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(time.Hour))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	m := mp.Meter("otlptest.meter")
	counter, err := m.Int64Counter("test.count", metric.WithUnit("{run}"))
	if err != nil {
		t.Fatal(err)
	}
	hist, err := m.Float64Histogram("test.duration", metric.WithUnit("s"))
	if err != nil {
		t.Fatal(err)
	}
	counter.Add(ctx, 3, metric.WithAttributes(attribute.String("model", "det")))
	hist.Record(ctx, 0.25)
	hist.Record(ctx, 0.75)
	if err := mp.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitMetrics(ctx, func(r *Receiver) bool {
		return len(r.Metric("test.count")) > 0 && len(r.Metric("test.duration")) > 0
	}); err != nil {
		t.Fatal(err)
	}
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	c := r.Metric("test.count")[0]
	if c.GetUnit() != "{run}" || len(c.GetSum().GetDataPoints()) != 1 {
		t.Fatalf("test.count = %v", c)
	}
	dp := c.GetSum().GetDataPoints()[0]
	if dp.GetAsInt() != 3 {
		t.Errorf("count = %d, want 3", dp.GetAsInt())
	}
	if v, _ := AttrString(dp.GetAttributes(), "model"); v != "det" {
		t.Errorf("model attribute = %q", v)
	}
	h := r.Metric("test.duration")[0].GetHistogram().GetDataPoints()[0]
	if h.GetCount() != 2 || h.GetSum() != 1 {
		t.Errorf("histogram count=%d sum=%v, want 2 and 1", h.GetCount(), h.GetSum())
	}
	if len(r.ResourceMetrics()) == 0 {
		t.Error("ResourceMetrics() is empty")
	}
	if _, n := r.Requests(); n < 1 {
		t.Errorf("metric calls = %d", n)
	}
}

func TestSetFailure(t *testing.T) {
	r := start(t)
	ctx := testContext(t)
	tc, mc := client(t, r)
	tests := []codes.Code{codes.Unavailable, codes.ResourceExhausted, codes.PermissionDenied}
	for _, code := range tests {
		t.Run(code.String(), func(t *testing.T) {
			r.SetFailure(code)
			_, err := tc.Export(ctx, oneSpan("refused"))
			if status.Code(err) != code {
				t.Errorf("trace Export error = %v, want code %s", err, code)
			}
			_, err = mc.Export(ctx, &colmetricspb.ExportMetricsServiceRequest{})
			if status.Code(err) != code {
				t.Errorf("metrics Export error = %v, want code %s", err, code)
			}
		})
	}
	if n := len(r.Spans()); n != 0 {
		t.Errorf("kept %d spans from refused requests", n)
	}
	if tr, m := r.Requests(); tr != len(tests) || m != len(tests) {
		t.Errorf("Requests() = %d, %d; want %d each (refused calls count)", tr, m, len(tests))
	}
	r.SetFailure(codes.OK)
	if _, err := tc.Export(ctx, oneSpan("accepted")); err != nil {
		t.Fatalf("after clearing the failure: %v", err)
	}
	if s := r.Spans(); len(s) != 1 || s[0].GetName() != "accepted" {
		t.Errorf("Spans() = %v", s)
	}
}

// TestSetFailureThroughExporter checks the SDK exporter sees the injected
// status (retries off, so the error comes back at once).
func TestSetFailureThroughExporter(t *testing.T) {
	r := start(t)
	ctx := testContext(t)
	r.SetFailure(codes.Unavailable)
	exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(r.Endpoint()), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Shutdown(ctx) }()
	tp := sdktrace.NewTracerProvider()
	_, span := tp.Tracer("x").Start(ctx, "s")
	span.End()
	stub := []sdktrace.ReadOnlySpan{span.(sdktrace.ReadOnlySpan)}
	if err := exp.ExportSpans(ctx, stub); status.Code(err) != codes.Unavailable {
		t.Fatalf("ExportSpans error = %v, want Unavailable", err)
	}
	r.SetFailure(codes.OK)
	if err := exp.ExportSpans(ctx, stub); err != nil {
		t.Fatalf("after clearing: %v", err)
	}
	if len(r.Spans()) != 1 {
		t.Errorf("got %d spans, want 1", len(r.Spans()))
	}
}

func TestSetDelay(t *testing.T) {
	r := start(t)
	ctx := testContext(t)
	tc, _ := client(t, r)
	r.SetDelay(time.Hour)

	// The client gives up: the call ends with its deadline, not the delay's.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	// DeadlineExceeded says the deadline ended the call (the delay is an
	// hour); no wall-time bound is needed for that.
	_, err := tc.Export(short, oneSpan("slow"))
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("Export error = %v, want DeadlineExceeded", err)
	}
	if len(r.Spans()) != 0 {
		t.Error("kept a span from a request its client abandoned")
	}

	// A delayed call is answered once the delay passes.
	r.SetDelay(20 * time.Millisecond)
	startAt := time.Now()
	if _, err := tc.Export(ctx, oneSpan("late")); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(startAt); d < 20*time.Millisecond {
		t.Errorf("answered after %v, before the 20ms delay", d)
	}
	r.SetDelay(0)
	if _, err := tc.Export(ctx, oneSpan("prompt")); err != nil {
		t.Fatal(err)
	}
	if n := len(r.Spans()); n != 2 {
		t.Errorf("got %d spans, want 2", n)
	}
}

func TestCloseEndsDelayedCalls(t *testing.T) {
	r, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	tc, _ := client(t, r)
	r.SetDelay(time.Hour)
	done := make(chan error, 1)
	go func() {
		_, err := tc.Export(ctx, oneSpan("stuck"))
		done <- err
	}()
	if err := r.WaitRequests(ctx, 1, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("stuck call succeeded after Close")
		}
	case <-ctx.Done():
		t.Fatal("Close did not end a delayed call")
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := r.WaitSpans(ctx, HasSpans(1)); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("WaitSpans on a closed receiver = %v, want a closed error", err)
	}
}

func TestWaitSpans(t *testing.T) {
	t.Run("context ends", func(t *testing.T) {
		r := start(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := r.WaitSpans(ctx, HasSpans(1))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("WaitSpans = %v, want context.Canceled", err)
		}
	})
	t.Run("already true returns at once", func(t *testing.T) {
		r := start(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := r.WaitSpans(ctx, func([]Span) bool { return true }); err != nil {
			t.Errorf("WaitSpans = %v", err)
		}
	})
	t.Run("wakes when spans arrive", func(t *testing.T) {
		r := start(t)
		ctx := testContext(t)
		tc, _ := client(t, r)
		waiting := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			first := true
			done <- r.WaitSpans(ctx, func(s []Span) bool {
				if first {
					first = false
					close(waiting)
				}
				return len(SpansNamed(s, "b")) == 1
			})
		}()
		<-waiting
		for _, name := range []string{"a", "b"} {
			if _, err := tc.Export(ctx, oneSpan(name)); err != nil {
				t.Fatal(err)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestReceiverConcurrentSafe(t *testing.T) {
	r := start(t)
	ctx := testContext(t)
	tc, mc := client(t, r)
	const senders, each = 4, 25
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				if _, err := tc.Export(ctx, oneSpan(fmt.Sprintf("s%d-%d", g, i))); err != nil {
					t.Error(err)
					return
				}
				if _, err := mc.Export(ctx, &colmetricspb.ExportMetricsServiceRequest{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		_ = r.WaitSpans(ctx, HasSpans(senders*each))
	})
	wg.Go(func() {
		for range 50 {
			_ = r.Spans()
			_ = r.Metric("x")
			r.Requests()
		}
	})
	wg.Wait()
	if n := len(r.Spans()); n != senders*each {
		t.Errorf("got %d spans, want %d", n, senders*each)
	}
	if tr, m := r.Requests(); tr != senders*each || m != senders*each {
		t.Errorf("Requests() = %d, %d", tr, m)
	}
}
