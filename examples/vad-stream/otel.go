package main

import (
	"context"
	"errors"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/ortel-dev/ortel/instrument/views"
)

// providers is the program's own OpenTelemetry SDK setup, as any service
// has one: OTLP exporters (gRPC, or http/protobuf when
// OTEL_EXPORTER_OTLP_PROTOCOL says so) configured by the standard
// OTEL_EXPORTER_OTLP_* variables, batched spans, periodic metrics, and
// ortel's histogram views (instrument/views). Without an endpoint nothing is
// exported: the telemetry is recorded and dropped.
type providers struct {
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	exported bool
}

func setupOTel(ctx context.Context, service string) (*providers, error) {
	res, err := newResource(service)
	if err != nil {
		return nil, err
	}
	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithView(views.FromEnv()...)}
	p := &providers{exported: os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""}
	if p.exported {
		spanExp, metricExp, err := newExporters(ctx)
		if err != nil {
			return nil, err
		}
		topts = append(topts, sdktrace.WithBatcher(spanExp))
		mopts = append(mopts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp)))
	}
	p.tp = sdktrace.NewTracerProvider(topts...)
	p.mp = sdkmetric.NewMeterProvider(mopts...)
	return p, nil
}

// shutdown flushes and stops both providers.
func (p *providers) shutdown(ctx context.Context) error {
	return errors.Join(p.tp.Shutdown(ctx), p.mp.Shutdown(ctx))
}

// otlpProtocol is the OTLP transport of a signal ("TRACES" or "METRICS"):
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else grpc (as ortel's own commands; the spec's default is http/protobuf).
func otlpProtocol(signal string) string {
	if p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"); p != "" {
		return p
	}
	if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" {
		return p
	}
	return "grpc"
}

// newExporters returns OTLP span and metric exporters over each signal's
// protocol; both read the standard OTEL_EXPORTER_OTLP_* variables.
func newExporters(ctx context.Context) (sdktrace.SpanExporter, sdkmetric.Exporter, error) {
	var spanExp sdktrace.SpanExporter
	var err error
	if otlpProtocol("TRACES") == "grpc" {
		spanExp, err = otlptracegrpc.New(ctx)
	} else {
		spanExp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	var metricExp sdkmetric.Exporter
	if otlpProtocol("METRICS") == "grpc" {
		metricExp, err = otlpmetricgrpc.New(ctx)
	} else {
		metricExp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, nil, errors.Join(err, spanExp.Shutdown(ctx))
	}
	return spanExp, metricExp, nil
}

// newResource names the service, letting OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override the name given in code.
func newResource(service string) (*resource.Resource, error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, err
	}
	return resource.Merge(res, resource.Environment())
}
