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
// has one: OTLP exporters configured by the standard OTEL_EXPORTER_OTLP_*
// variables (gRPC, or http/protobuf when OTEL_EXPORTER_OTLP_PROTOCOL or its
// _TRACES_/_METRICS_ variant says so), batched spans, periodic metrics, and
// ortel's histogram views (instrument/views). Without an endpoint nothing is
// exported: the telemetry is recorded and dropped.
type providers struct {
	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	exported bool
}

func setupOTel(ctx context.Context, service string) (*providers, error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, err
	}
	topts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	mopts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithView(views.FromEnv()...)}
	p := &providers{exported: os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""}
	if p.exported {
		var spanExp sdktrace.SpanExporter
		if protocol("TRACES") == "http/protobuf" {
			spanExp, err = otlptracehttp.New(ctx)
		} else {
			spanExp, err = otlptracegrpc.New(ctx)
		}
		if err != nil {
			return nil, err
		}
		var metricExp sdkmetric.Exporter
		if protocol("METRICS") == "http/protobuf" {
			metricExp, err = otlpmetrichttp.New(ctx)
		} else {
			metricExp, err = otlpmetricgrpc.New(ctx)
		}
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

// protocol returns the OTLP protocol of a signal ("TRACES" or "METRICS"):
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else grpc (the exporters here support grpc and http/protobuf).
func protocol(signal string) string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"); v != "" {
		return v
	}
	if v := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); v != "" {
		return v
	}
	return "grpc"
}
