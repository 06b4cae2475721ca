package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// explain wraps a failed export's error with where it went (the resolved
// URL, which never holds credentials: they are dropped from endpoints, and
// header values are not part of it) and, when the failure shows the other
// side speaks another protocol or security, the variable to set.
func (x Exporter) explain(err error) error {
	if err == nil {
		return nil
	}
	where := x.Where()
	if x.endpointVar != "" {
		where += " (from " + x.endpointVar + ")"
	}
	if hint := x.hint(err.Error()); hint != "" {
		return fmt.Errorf("export to %s: %w; %s", where, err, hint)
	}
	return fmt.Errorf("export to %s: %w", where, err)
}

// hint recognises a protocol or TLS mismatch in an export error's text.
// The texts are those of gRPC-Go and net/http, seen against a collector's
// OTLP/HTTP and OTLP/gRPC ports (explain_test.go).
func (x Exporter) hint(msg string) string {
	protoVar := x.protocolVar
	if protoVar == "" {
		protoVar = envPrefix + "PROTOCOL"
	}
	endpointVar := x.endpointVar
	if endpointVar == "" {
		endpointVar = envPrefix + "ENDPOINT"
	}
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("first record does not look like a TLS handshake", "server gave HTTP response to HTTPS client"):
		return fmt.Sprintf("the endpoint answers in plaintext, not TLS: write http:// in %s (or set %sINSECURE=true for an endpoint without a scheme)", endpointVar, envPrefix)
	case !isHTTP(x.Protocol) && has("frame too large", "server preface", "unexpected HTTP status code", "malformed header: missing HTTP content-type"):
		return fmt.Sprintf("the endpoint does not speak OTLP/gRPC, it looks like an OTLP/HTTP receiver (a collector's port 4318): set %s=http/protobuf, or point %s at the collector's gRPC port (4317)", protoVar, endpointVar)
	case isHTTP(x.Protocol) && has(`malformed HTTP response "\x00\x00`, "invalid gRPC request content-type", "415 Unsupported Media Type", "HTTP/1.x transport connection broken",
		// An HTTP/2 server speaks first (its SETTINGS frame), sometimes
		// before net/http has written the request.
		"readLoopPeekFailLocked"):
		return fmt.Sprintf("the endpoint does not speak OTLP/HTTP, it looks like an OTLP/gRPC receiver (a collector's port 4317): set %s=grpc, or point %s at the collector's OTLP/HTTP port (4318)", protoVar, endpointVar)
	}
	return ""
}

// explainingTraceClient is an OTLP trace client whose upload errors say
// where they went (Exporter.explain).
type explainingTraceClient struct {
	otlptrace.Client
	x Exporter
}

func (c explainingTraceClient) UploadTraces(ctx context.Context, spans []*tracepb.ResourceSpans) error {
	return c.x.explain(c.Client.UploadTraces(ctx, spans))
}

// explainingMetricExporter is a metric exporter whose export errors say
// where they went (Exporter.explain).
type explainingMetricExporter struct {
	sdkmetric.Exporter
	x Exporter
}

func (e explainingMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	return e.x.explain(e.Exporter.Export(ctx, rm))
}
