package otlptest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	// Collectors and SDK exporters compress with gzip by default.
	_ "google.golang.org/grpc/encoding/gzip"
)

// DefaultAddress is where Start listens unless WithAddress says otherwise:
// the loopback interface, on a port the system picks.
const DefaultAddress = "127.0.0.1:0"

// Option configures Start.
type Option func(*config)

type config struct {
	address     string
	httpAddress string
}

// WithAddress sets the TCP address to listen on, such as "127.0.0.1:4317".
// The default is DefaultAddress.
func WithAddress(addr string) Option {
	return func(c *config) { c.address = addr }
}

// Span is one received span with the resource and instrumentation scope it
// was sent under.
type Span struct {
	Resource *resourcepb.Resource
	Scope    *commonpb.InstrumentationScope
	*tracepb.Span
}

// Receiver is an in-process OTLP/gRPC receiver, and an OTLP/HTTP one too
// when started WithHTTP. Its methods are safe for
// concurrent use.
type Receiver struct {
	srv    *grpc.Server
	lis    net.Listener
	served chan struct{} // closed when Serve returns
	closed chan struct{} // closed by Close: ends injected delays
	once   sync.Once

	// The OTLP/HTTP side, when started WithHTTP.
	httpLis    net.Listener
	httpSrv    *http.Server
	httpServed chan struct{}
	// Accepted requests that came over HTTP.
	httpTraces, httpMetrics int

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced whenever data arrives
	traces      []*coltracepb.ExportTraceServiceRequest
	metrics     []*colmetricspb.ExportMetricsServiceRequest
	traceCalls  int
	metricCalls int
	failure     codes.Code
	delay       time.Duration
	headers     metadata.MD
}

// Start listens and serves in the background until Close.
func Start(opts ...Option) (*Receiver, error) {
	cfg := config{address: DefaultAddress}
	for _, o := range opts {
		o(&cfg)
	}
	lis, err := net.Listen("tcp", cfg.address)
	if err != nil {
		return nil, fmt.Errorf("otlptest: listen on %q: %w", cfg.address, err)
	}
	r := &Receiver{
		srv:     grpc.NewServer(),
		lis:     lis,
		served:  make(chan struct{}),
		closed:  make(chan struct{}),
		changed: make(chan struct{}),
	}
	if cfg.httpAddress != "" {
		if err := r.startHTTP(cfg.httpAddress); err != nil {
			_ = lis.Close()
			return nil, err
		}
	}
	coltracepb.RegisterTraceServiceServer(r.srv, traceService{r: r})
	colmetricspb.RegisterMetricsServiceServer(r.srv, metricsService{r: r})
	go func() {
		defer close(r.served)
		// Serve returns only when the server stops (Close).
		_ = r.srv.Serve(lis)
	}()
	return r, nil
}

// Endpoint returns the listening address as "host:port", for an exporter's
// endpoint option (plaintext: the receiver does not speak TLS).
func (r *Receiver) Endpoint() string { return r.lis.Addr().String() }

// Close stops the receiver: pending requests are cancelled, connections
// closed. It waits for the server to finish and is safe to call twice. The
// data received stays readable.
func (r *Receiver) Close() error {
	r.once.Do(func() {
		close(r.closed)
		r.srv.Stop()
		<-r.served
		r.closeHTTP()
	})
	return nil
}

// SetFailure makes every following export fail with the gRPC status code c
// (codes.Unavailable looks like a collector restarting, ResourceExhausted
// like one refusing load) until SetFailure(codes.OK). Failed requests are
// counted by Requests but their data is not kept.
func (r *Receiver) SetFailure(c codes.Code) {
	r.mu.Lock()
	r.failure = c
	r.mu.Unlock()
}

// SetDelay makes every following export wait d before it is answered, like
// a slow collector; SetDelay(0) ends it. A waiting export ends early when
// its client gives up (deadline, cancellation) or the receiver closes.
func (r *Receiver) SetDelay(d time.Duration) {
	r.mu.Lock()
	r.delay = d
	r.mu.Unlock()
}

// Requests returns how many trace and metric export calls arrived, including
// those answered with an injected failure.
func (r *Receiver) Requests() (traces, metrics int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.traceCalls, r.metricCalls
}

// Headers returns the gRPC metadata (OTLP headers) of the most recent
// export call, accepted or not; nil before the first.
func (r *Receiver) Headers() metadata.MD {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.headers.Copy()
}

// TraceRequests returns the accepted trace export requests, in arrival order.
func (r *Receiver) TraceRequests() []*coltracepb.ExportTraceServiceRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*coltracepb.ExportTraceServiceRequest(nil), r.traces...)
}

// Spans returns every accepted span, in arrival order, flattened out of its
// resource and scope.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Span
	for _, req := range r.traces {
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					out = append(out, Span{Resource: rs.GetResource(), Scope: ss.GetScope(), Span: s})
				}
			}
		}
	}
	return out
}

// ResourceMetrics returns every accepted ResourceMetrics, in arrival order.
func (r *Receiver) ResourceMetrics() []*metricspb.ResourceMetrics {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*metricspb.ResourceMetrics
	for _, req := range r.metrics {
		out = append(out, req.GetResourceMetrics()...)
	}
	return out
}

// Metric returns every accepted metric named name, from all batches, in
// arrival order (so the last one holds the latest cumulative values).
func (r *Receiver) Metric(name string) []*metricspb.Metric {
	var out []*metricspb.Metric
	for _, rm := range r.ResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetName() == name {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// WaitSpans blocks until pred, called with all spans received so far,
// returns true, or ctx ends. It checks once at once and again each time new
// spans arrive; it never polls.
func (r *Receiver) WaitSpans(ctx context.Context, pred func([]Span) bool) error {
	return r.wait(ctx, "spans", func() bool { return pred(r.Spans()) })
}

// WaitMetrics blocks until pred(r) returns true or ctx ends, checking at
// once and again each time new metrics arrive. pred typically calls
// r.Metric.
func (r *Receiver) WaitMetrics(ctx context.Context, pred func(*Receiver) bool) error {
	return r.wait(ctx, "metrics", func() bool { return pred(r) })
}

// WaitRequests blocks until at least traces trace and metrics metric export
// calls arrived (accepted or failed), or ctx ends.
func (r *Receiver) WaitRequests(ctx context.Context, traces, metrics int) error {
	return r.wait(ctx, "requests", func() bool {
		t, m := r.Requests()
		return t >= traces && m >= metrics
	})
}

func (r *Receiver) wait(ctx context.Context, what string, ok func() bool) error {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		// Read the channel before checking, so data arriving during the
		// check closes the channel we then wait on.
		if ok() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("otlptest: waiting for %s: %w", what, context.Cause(ctx))
		case <-r.closed:
			return errors.New("otlptest: waiting for " + what + ": receiver closed")
		}
	}
}

// notify wakes every waiter; r.mu must be held.
func (r *Receiver) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// admit counts a call and applies the injected delay and failure. It
// returns the status error to answer with, or nil to accept the data.
func (r *Receiver) admit(ctx context.Context, count *int) error {
	md, _ := metadata.FromIncomingContext(ctx)
	r.mu.Lock()
	*count++
	r.headers = md.Copy()
	delay := r.delay
	r.notify()
	r.mu.Unlock()
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-r.closed:
			return status.Error(codes.Unavailable, "otlptest: receiver closed")
		}
	}
	r.mu.Lock()
	failure := r.failure
	r.mu.Unlock()
	if failure != codes.OK {
		return status.Errorf(failure, "otlptest: injected failure %s", failure)
	}
	return nil
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if err := s.r.admit(ctx, &s.r.traceCalls); err != nil {
		return nil, err
	}
	s.r.mu.Lock()
	s.r.traces = append(s.r.traces, req)
	s.r.notify()
	s.r.mu.Unlock()
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *Receiver
}

func (s metricsService) Export(ctx context.Context, req *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	if err := s.r.admit(ctx, &s.r.metricCalls); err != nil {
		return nil, err
	}
	s.r.mu.Lock()
	s.r.metrics = append(s.r.metrics, req)
	s.r.notify()
	s.r.mu.Unlock()
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}
