package telemetry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Telemetry is a configured TracerProvider and MeterProvider with their
// exporters. Hand the providers to instrumented code (or make them the
// global ones); call Shutdown before the program exits.
type Telemetry struct {
	TracerProvider *sdktrace.TracerProvider
	MeterProvider  *sdkmetric.MeterProvider
	// Resolved is the configuration in use, Setup's warnings included.
	Resolved Resolved

	stats         *stats
	abort         context.CancelFunc // abandons in-flight exports
	exportersDone []<-chan struct{}  // closed as each exporter finishes shutting down
	files         []string

	shutdownOnce sync.Once
	shutdownErr  error
}

// Setup resolves cfg (see Resolve) and builds the providers:
//
//   - ModeOTLP: OTLP/gRPC trace and metric exporters, every setting passed
//     explicitly from Resolved, retries on (bounded by the export timeout);
//   - ModeFile: traces.jsonl and metrics.jsonl under OutputDir, appended;
//   - ModeDisabled: providers that record nothing.
//
// Spans go through a batch processor whose queue never blocks span.End: a
// full queue drops the span and counts it (Stats). Metrics are read
// periodically with cumulative temporality. Setup does not contact the
// collector: one that is down costs nothing until exports fail, and they
// fail in the background.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	r, err := Resolve(cfg)
	if err != nil {
		return nil, err
	}
	res, warnings := newResource(ctx, r)
	r.Warnings = append(r.Warnings, warnings...)

	abortCtx, abort := context.WithCancel(context.Background())
	t := &Telemetry{Resolved: r, stats: &stats{}, abort: abort}

	if r.Mode == ModeDisabled {
		t.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.NeverSample()))
		t.MeterProvider = sdkmetric.NewMeterProvider(append(extraReaders(cfg), sdkmetric.WithResource(res), sdkmetric.WithView(cfg.Views...))...)
		return t, nil
	}

	spanExp, metricExp, err := t.exporters(ctx, r)
	if err != nil {
		abort()
		return nil, err
	}

	cse := &countingSpanExporter{next: spanExp, stats: t.stats, abort: abortCtx, done: make(chan struct{})}
	cme := &countingMetricExporter{next: metricExp, stats: t.stats, abort: abortCtx, done: make(chan struct{})}
	t.exportersDone = []<-chan struct{}{cse.done, cme.done}
	bsp := sdktrace.NewBatchSpanProcessor(
		cse,
		sdktrace.WithMaxQueueSize(r.SpanQueueSize+queueSlack),
		sdktrace.WithMaxExportBatchSize(r.SpanBatchSize),
		sdktrace.WithBatchTimeout(r.SpanScheduleDelay),
		sdktrace.WithExportTimeout(r.SpanExportTimeout),
	)
	t.TracerProvider = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(&countingProcessor{next: bsp, stats: t.stats, limit: int64(r.SpanQueueSize)}),
	)
	reader := sdkmetric.NewPeriodicReader(
		cme,
		sdkmetric.WithInterval(r.MetricInterval),
		sdkmetric.WithTimeout(r.MetricTimeout),
	)
	t.MeterProvider = sdkmetric.NewMeterProvider(append(extraReaders(cfg),
		sdkmetric.WithResource(res),
		sdkmetric.WithReader(reader),
		sdkmetric.WithView(cfg.Views...),
	)...)
	return t, nil
}

// extraReaders returns cfg.Readers as MeterProvider options.
func extraReaders(cfg Config) []sdkmetric.Option {
	var opts []sdkmetric.Option
	for _, r := range cfg.Readers {
		opts = append(opts, sdkmetric.WithReader(r))
	}
	return opts
}

// exporters builds the span and metric exporters of r's mode. On failure
// it closes what it opened.
func (t *Telemetry) exporters(ctx context.Context, r Resolved) (sdktrace.SpanExporter, sdkmetric.Exporter, error) {
	if r.Mode == ModeFile {
		traces, err := openSink(r.TracesFile())
		if err != nil {
			return nil, nil, err
		}
		metrics, err := openSink(r.MetricsFile())
		if err != nil {
			_ = traces.close()
			return nil, nil, err
		}
		spanExp, err := otlptrace.New(ctx, fileTraceClient{sink: traces})
		if err != nil {
			_ = traces.close()
			_ = metrics.close()
			return nil, nil, fmt.Errorf("telemetry: start the traces file exporter: %w", err)
		}
		t.files = []string{traces.path, metrics.path}
		return spanExp, fileMetricExporter{sink: metrics}, nil
	}

	spanExp, err := otlptracegrpc.New(ctx, traceOptions(r.Traces)...)
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: OTLP trace exporter for %s: %w", r.Traces.Endpoint, err)
	}
	metricExp, err := otlpmetricgrpc.New(ctx, metricOptions(r.Metrics)...)
	if err != nil {
		_ = spanExp.Shutdown(ctx)
		return nil, nil, fmt.Errorf("telemetry: OTLP metric exporter for %s: %w", r.Metrics.Endpoint, err)
	}
	return spanExp, metricExp, nil
}

// credentials returns the transport credentials of x: passing them
// explicitly also overrides any certificate variable the exporter would
// otherwise read on its own.
func (x Exporter) credentials() credentials.TransportCredentials {
	if x.Insecure {
		return insecure.NewCredentials()
	}
	if x.tls == nil {
		return credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
	}
	return credentials.NewTLS(x.tls)
}

func traceOptions(x Exporter) []otlptracegrpc.Option {
	opts := []otlptracegrpc.Option{
		otlptracegrpc.WithEndpoint(x.Endpoint),
		otlptracegrpc.WithTLSCredentials(x.credentials()),
		otlptracegrpc.WithHeaders(copyHeaders(x.Headers)),
		otlptracegrpc.WithTimeout(x.Timeout),
	}
	if x.Compression == compressionGzip {
		opts = append(opts, otlptracegrpc.WithCompressor(compressionGzip))
	}
	return opts
}

func metricOptions(x Exporter) []otlpmetricgrpc.Option {
	opts := []otlpmetricgrpc.Option{
		otlpmetricgrpc.WithEndpoint(x.Endpoint),
		otlpmetricgrpc.WithTLSCredentials(x.credentials()),
		otlpmetricgrpc.WithHeaders(copyHeaders(x.Headers)),
		otlpmetricgrpc.WithTimeout(x.Timeout),
		otlpmetricgrpc.WithTemporalitySelector(sdkmetric.DefaultTemporalitySelector), // cumulative
	}
	if x.Compression == compressionGzip {
		opts = append(opts, otlpmetricgrpc.WithCompressor(compressionGzip))
	}
	return opts
}

// copyHeaders returns a non-nil copy: an explicit empty map also overrides
// any headers variable the exporter would read on its own.
func copyHeaders(h Headers) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = v
	}
	return out
}

// Files returns the paths of the traces and metrics files in ModeFile, nil
// otherwise.
func (t *Telemetry) Files() []string {
	return append([]string(nil), t.files...)
}

// Stats returns the span and metric export counters.
func (t *Telemetry) Stats() Stats { return t.stats.snapshot() }

// shutdownGrace is how long Shutdown waits, after abandoning in-flight
// exports, for the exporters to finish closing.
const shutdownGrace = 200 * time.Millisecond

// Shutdown flushes and shuts down both providers, in parallel, within
// Resolved.ShutdownTimeout (or ctx's deadline, if sooner). When time runs
// out — a collector that hangs — exports still in flight are abandoned, so
// Shutdown returns on time, plus at most 200ms for the exporters to close.
// Its error reports the spans dropped and metric exports failed over the
// whole run. Calling it again returns the first call's result.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	t.shutdownOnce.Do(func() { t.shutdownErr = t.shutdown(ctx) })
	return t.shutdownErr
}

func (t *Telemetry) shutdown(parent context.Context) error {
	ctx, cancel := context.WithTimeout(parent, t.Resolved.ShutdownTimeout)
	defer cancel()
	stopAbort := context.AfterFunc(ctx, t.abort)
	defer stopAbort()

	var traceErr, metricErr error
	var wg sync.WaitGroup
	wg.Go(func() { traceErr = t.TracerProvider.Shutdown(ctx) })
	wg.Go(func() { metricErr = t.MeterProvider.Shutdown(ctx) })
	wg.Wait()
	t.abort()
	// Exports abandoned just now end at once; give the exporters a moment
	// to finish closing (connections, files) so nothing outlives Shutdown.
	grace, stopGrace := context.WithTimeout(context.Background(), shutdownGrace)
	defer stopGrace()
	for _, done := range t.exportersDone {
		select {
		case <-done:
		case <-grace.Done():
		}
	}
	t.stats.final.Store(true)

	var errs []error
	for _, e := range []struct {
		signal string
		err    error
	}{{"traces", traceErr}, {"metrics", metricErr}} {
		switch {
		case e.err == nil:
		case errors.Is(e.err, context.DeadlineExceeded) && parent.Err() == nil:
			errs = append(errs, fmt.Errorf("shut down %s: gave up after %s: %w", e.signal, durationText(t.Resolved.ShutdownTimeout), e.err))
		default:
			errs = append(errs, fmt.Errorf("shut down %s: %w", e.signal, e.err))
		}
	}
	st := t.Stats()
	if st.SpansDropped > 0 {
		err := fmt.Errorf("%d of %d spans were dropped (%d met a full queue)", st.SpansDropped, st.SpansEnded, st.SpansQueueFull)
		if st.LastError != nil {
			err = fmt.Errorf("%w; last export error: %v", err, st.LastError)
		}
		errs = append(errs, err)
	}
	if st.MetricExportFailures > 0 {
		errs = append(errs, fmt.Errorf("%d of %d metric exports failed", st.MetricExportFailures, st.MetricExportFailures+st.MetricExports))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	return nil
}
