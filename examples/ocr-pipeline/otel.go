package main

import (
	"context"
	"errors"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/ortel-dev/ortel/instrument/views"
)

// providers is the program's own OpenTelemetry SDK setup, as any service
// has one: OTLP/gRPC exporters configured by the standard
// OTEL_EXPORTER_OTLP_* variables, batched spans, periodic metrics, and
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
		spanExp, err := otlptracegrpc.New(ctx)
		if err != nil {
			return nil, err
		}
		metricExp, err := otlpmetricgrpc.New(ctx)
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
