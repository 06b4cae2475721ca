package telemetry

import (
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
)

// This file serves callers that write spans themselves instead of through
// the TracerProvider's batch processor, which drops spans when its queue is
// full: offline conversions (ortel import) that must write everything, in
// bounded batches, with backpressure.

// Resource returns the resource the providers describe the process with.
func (t *Telemetry) Resource() *resource.Resource { return t.res }

// TraceClient returns an OTLP trace client for r's trace exporter settings
// (protocol, endpoint, TLS, headers, timeout, compression), with the
// exporter's retries on. It is not started. Meaningful in ModeOTLP.
func (r Resolved) TraceClient() otlptrace.Client { return traceClient(r.Traces) }

// traceClient returns the OTLP trace client of x's protocol, not started.
// Its errors name where the export went (see Exporter.explain).
func traceClient(x Exporter) otlptrace.Client {
	if isHTTP(x.Protocol) {
		return explainingTraceClient{Client: otlptracehttp.NewClient(traceHTTPOptions(x)...), x: x}
	}
	return explainingTraceClient{Client: otlptracegrpc.NewClient(traceOptions(x)...), x: x}
}
