package profimport

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
)

func otlpjsonServiceName(s string) attribute.KeyValue { return attribute.String("service.name", s) }

func grpcClient(endpoint string) otlptrace.Client {
	return otlptracegrpc.NewClient(otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
}
