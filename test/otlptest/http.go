package otlptest

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// OTLP/HTTP paths the receiver serves (the specification's defaults).
const (
	HTTPTracesPath  = "/v1/traces"
	HTTPMetricsPath = "/v1/metrics"
)

// maxHTTPBody bounds one OTLP/HTTP request body, compressed or not.
const maxHTTPBody = 64 << 20

// WithHTTP makes Start also serve OTLP/HTTP with protobuf bodies
// (http/protobuf) on addr, such as "127.0.0.1:0", at /v1/traces and
// /v1/metrics. What arrives over HTTP is kept, counted, delayed and failed
// exactly like what arrives over gRPC; HTTPEndpoint returns the address.
func WithHTTP(addr string) Option {
	return func(c *config) { c.httpAddress = addr }
}

// HTTPEndpoint returns the OTLP/HTTP listening address as "host:port", or
// "" when the receiver was started without WithHTTP.
func (r *Receiver) HTTPEndpoint() string {
	if r.httpLis == nil {
		return ""
	}
	return r.httpLis.Addr().String()
}

// HTTPAccepted returns how many of the accepted trace and metric export
// requests arrived over OTLP/HTTP; the rest of TraceRequests and
// ResourceMetrics arrived over gRPC.
func (r *Receiver) HTTPAccepted() (traces, metrics int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.httpTraces, r.httpMetrics
}

// startHTTP listens on addr and serves OTLP/HTTP until Close.
func (r *Receiver) startHTTP(addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("otlptest: listen for OTLP/HTTP on %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+HTTPTracesPath, func(w http.ResponseWriter, req *http.Request) {
		msg := &coltracepb.ExportTraceServiceRequest{}
		r.serveHTTP(w, req, msg, &r.traceCalls, func() { r.traces = append(r.traces, msg); r.httpTraces++ }, &coltracepb.ExportTraceServiceResponse{})
	})
	mux.HandleFunc("POST "+HTTPMetricsPath, func(w http.ResponseWriter, req *http.Request) {
		msg := &colmetricspb.ExportMetricsServiceRequest{}
		r.serveHTTP(w, req, msg, &r.metricCalls, func() { r.metrics = append(r.metrics, msg); r.httpMetrics++ }, &colmetricspb.ExportMetricsServiceResponse{})
	})
	r.httpLis = lis
	r.httpSrv = &http.Server{Handler: mux}
	r.httpServed = make(chan struct{})
	go func() {
		defer close(r.httpServed)
		_ = r.httpSrv.Serve(lis) // returns when Close shuts the server
	}()
	return nil
}

// serveHTTP decodes one protobuf export request, applies the injected
// delay and failure, keeps the message and answers.
func (r *Receiver) serveHTTP(w http.ResponseWriter, req *http.Request, msg proto.Message, count *int, keep func(), resp proto.Message) {
	if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
		http.Error(w, fmt.Sprintf("otlptest: Content-Type %q is not application/x-protobuf", ct), http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, maxHTTPBody)
	if strings.EqualFold(req.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, "otlptest: bad gzip body: "+err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = io.LimitReader(zr, maxHTTPBody)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, "otlptest: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := proto.Unmarshal(raw, msg); err != nil {
		http.Error(w, "otlptest: decode protobuf body: "+err.Error(), http.StatusBadRequest)
		return
	}
	md := metadata.MD{}
	for k, vs := range req.Header {
		md.Append(strings.ToLower(k), vs...)
	}
	if err := r.admit(metadata.NewIncomingContext(req.Context(), md), count); err != nil {
		http.Error(w, err.Error(), httpStatus(err))
		return
	}
	r.mu.Lock()
	keep()
	r.notify()
	r.mu.Unlock()
	out, err := proto.Marshal(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// httpStatus maps an injected gRPC failure to the OTLP/HTTP status a
// collector answers with: retryable codes become 503 (or 429), others 400.
func httpStatus(err error) int {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Aborted:
		return http.StatusServiceUnavailable
	case codes.ResourceExhausted:
		return http.StatusTooManyRequests
	}
	return http.StatusBadRequest
}

// closeHTTP stops the OTLP/HTTP server, if any, and waits for it.
func (r *Receiver) closeHTTP() {
	if r.httpSrv == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // do not wait for requests: Close cancels pending ones
	if err := r.httpSrv.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		_ = r.httpSrv.Close()
	}
	_ = r.httpSrv.Close()
	<-r.httpServed
}
