package telemetry

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/ortel-dev/ortel/instrument/spanbatch"
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
	abort         context.CancelFunc     // abandons in-flight exports
	exportersDone []<-chan struct{}      // closed as each exporter finishes shutting down
	spanProcessor sdktrace.SpanProcessor // the batch processor's, nil without one
	files         []string
	res           *resource.Resource
	spools        [2]*spool // traces, metrics; nil without a spool
	breakers      breakers  // per collector, shared by the signals sent to it

	shutdownOnce sync.Once
	shutdownErr  error
	shutdownTook atomic.Int64 // nanoseconds
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
	res := cfg.Resource
	if res == nil {
		var warnings []string
		res, warnings = newResource(ctx, r)
		r.Warnings = append(r.Warnings, warnings...)
	}

	abortCtx, abort := context.WithCancel(context.Background())
	t := &Telemetry{Resolved: r, stats: &stats{}, abort: abort, res: res}

	if r.Mode == ModeDisabled {
		t.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sdktrace.NeverSample()))
		t.MeterProvider = sdkmetric.NewMeterProvider(append(extraReaders(cfg), sdkmetric.WithResource(res), sdkmetric.WithView(cfg.Views...))...)
		return t, nil
	}

	console := cfg.Console
	if console == nil {
		console = os.Stdout
	}
	if r.SpoolDir != "" {
		used := &spoolUsage{paths: []string{r.SpoolTracesFile(), r.SpoolMetricsFile()}}
		for i, x := range []Exporter{r.Traces, r.Metrics} {
			if x.Kind == KindOTLP {
				t.spools[i] = &spool{path: [2]string{r.SpoolTracesFile(), r.SpoolMetricsFile()}[i], maxBytes: r.SpoolMaxBytes, used: used}
			}
		}
	}
	spanExp, metricExp, err := t.exporters(ctx, r, console)
	if err != nil {
		abort()
		return nil, err
	}

	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithSampler(r.sampler)}
	if spanExp != nil {
		cse := &countingSpanExporter{next: spanExp, stats: t.stats, abort: abortCtx, done: make(chan struct{}), spooling: t.spools[0] != nil}
		t.exportersDone = append(t.exportersDone, cse.done)
		// instrument/spanbatch, not the SDK's batcher: the SDK's wakes its
		// goroutine for every span, which next to a short Run costs more
		// CPU than the span (docs/sdk-batcher-wakeups.md). Every option is
		// passed, so Resolved (ortel's defaults, OTEL_BSP_*) is what runs.
		bsp := spanbatch.New(cse,
			spanbatch.WithMaxQueueSize(r.SpanQueueSize+queueSlack),
			spanbatch.WithMaxExportBatchSize(r.SpanBatchSize),
			spanbatch.WithBatchTimeout(r.SpanScheduleDelay),
			spanbatch.WithExportTimeout(r.SpanExportTimeout),
		)
		t.spanProcessor = &countingProcessor{next: bsp, stats: t.stats, limit: int64(r.SpanQueueSize)}
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(t.spanProcessor))
	}
	t.TracerProvider = sdktrace.NewTracerProvider(tpOpts...)

	mpOpts := append(extraReaders(cfg), sdkmetric.WithResource(res), sdkmetric.WithView(cfg.Views...))
	if metricExp != nil {
		cme := &countingMetricExporter{next: metricExp, stats: t.stats, abort: abortCtx, done: make(chan struct{}), spool: t.spools[1]}
		if t.spools[1] != nil {
			cme.breaker = t.breakers.of(r.Metrics)
		}
		t.exportersDone = append(t.exportersDone, cme.done)
		mpOpts = append(mpOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(
			cme,
			sdkmetric.WithInterval(r.MetricInterval),
			sdkmetric.WithTimeout(r.MetricTimeout),
		)))
	}
	t.MeterProvider = sdkmetric.NewMeterProvider(mpOpts...)
	if err := t.registerSelfMetrics(spanExp != nil); err != nil {
		abort()
		return nil, err
	}
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

// exporters builds each signal's exporter: nil for KindNone. On failure
// it closes what it opened.
func (t *Telemetry) exporters(ctx context.Context, r Resolved, console io.Writer) (spanExp sdktrace.SpanExporter, metricExp sdkmetric.Exporter, err error) {
	var opened []func()
	defer func() {
		if err != nil {
			for _, closeIt := range opened {
				closeIt()
			}
		}
	}()
	var cons *fileSink
	sink := func(x Exporter, path string) (*fileSink, error) {
		if x.Kind == KindConsole {
			if cons == nil {
				cons = consoleSink(console)
			}
			return cons, nil
		}
		s, err := openRotatingSink(path, r.Rotation)
		if err != nil {
			return nil, err
		}
		if s.repaired != "" {
			t.Resolved.Warnings = append(t.Resolved.Warnings, s.repaired)
		}
		opened = append(opened, func() { _ = s.close() })
		t.files = append(t.files, s.path)
		return s, nil
	}

	switch r.Traces.Kind {
	case KindFile, KindConsole:
		s, err := sink(r.Traces, r.TracesFile())
		if err != nil {
			return nil, nil, err
		}
		if spanExp, err = otlptrace.New(ctx, fileTraceClient{sink: s}); err != nil {
			return nil, nil, fmt.Errorf("telemetry: start the traces %s exporter: %w", r.Traces.Kind, err)
		}
	case KindOTLP:
		client := traceClient(r.Traces)
		if t.spools[0] != nil {
			client = spoolingTraceClient{next: client, spool: t.spools[0], stats: t.stats, breaker: t.breakers.of(r.Traces)}
		}
		spanExp, err = otlptrace.New(ctx, client)
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: OTLP trace exporter for %s: %w", r.Traces.Endpoint, err)
		}
		opened = append(opened, func() { _ = spanExp.Shutdown(ctx) })
	}

	switch r.Metrics.Kind {
	case KindFile, KindConsole:
		s, err := sink(r.Metrics, r.MetricsFile())
		if err != nil {
			return nil, nil, err
		}
		metricExp = fileMetricExporter{sink: s}
	case KindOTLP:
		if isHTTP(r.Metrics.Protocol) {
			metricExp, err = otlpmetrichttp.New(ctx, metricHTTPOptions(r.Metrics)...)
		} else {
			metricExp, err = otlpmetricgrpc.New(ctx, metricOptions(r.Metrics)...)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("telemetry: OTLP metric exporter for %s: %w", r.Metrics.Endpoint, err)
		}
		metricExp = explainingMetricExporter{Exporter: metricExp, x: r.Metrics}
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
	return credentials.NewTLS(x.tlsConfig())
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

func traceHTTPOptions(x Exporter) []otlptracehttp.Option {
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpoint(x.Endpoint),
		otlptracehttp.WithURLPath(x.URLPath),
		otlptracehttp.WithHeaders(copyHeaders(x.Headers)),
		otlptracehttp.WithTimeout(x.Timeout),
		otlptracehttp.WithCompression(otlptracehttp.NoCompression),
		otlptracehttp.WithEncoding(otlptracehttp.EncodingProtobuf),
	}
	if x.Protocol == ProtocolHTTPJSON {
		opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	if x.Insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	} else {
		opts = append(opts, otlptracehttp.WithTLSClientConfig(x.tlsConfig()))
	}
	if x.Compression == compressionGzip {
		opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	}
	return opts
}

func metricHTTPOptions(x Exporter) []otlpmetrichttp.Option {
	opts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithEndpoint(x.Endpoint),
		otlpmetrichttp.WithURLPath(x.URLPath),
		otlpmetrichttp.WithHeaders(copyHeaders(x.Headers)),
		otlpmetrichttp.WithTimeout(x.Timeout),
		otlpmetrichttp.WithCompression(otlpmetrichttp.NoCompression),
		otlpmetrichttp.WithTemporalitySelector(sdkmetric.DefaultTemporalitySelector), // cumulative
	}
	if x.Insecure {
		opts = append(opts, otlpmetrichttp.WithInsecure())
	}
	switch {
	case x.Protocol == ProtocolHTTPJSON:
		// The client carries x's TLS and re-encodes each request as JSON.
		opts = append(opts, otlpmetrichttp.WithHTTPClient(metricHTTPClient(x)))
	case !x.Insecure:
		opts = append(opts, otlpmetrichttp.WithTLSClientConfig(x.tlsConfig()))
	}
	if x.Compression == compressionGzip {
		opts = append(opts, otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression))
	}
	return opts
}

// tlsConfig is x's TLS configuration: built by Resolve from the
// certificate files, else TLS 1.2+ with the system's CAs.
func (x Exporter) tlsConfig() *tls.Config {
	if x.tls == nil {
		return &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return x.tls
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
// exports, for the exporters to finish closing (without a spool).
const shutdownGrace = 200 * time.Millisecond

// Shutdown flushes and shuts down both providers, in parallel, within
// Resolved.ShutdownTimeout (or ctx's deadline, if sooner). When time runs
// out — a collector that hangs — exports still in flight are abandoned, so
// Shutdown returns on time, plus at most 200ms for the exporters to close;
// with a spool, plus the time it takes to write to it what could not be
// sent (local work, bounded by the span queue and the spool's bound).
// Its error reports the spans dropped and metric exports failed over the
// whole run. Calling it again returns the first call's result.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	t.shutdownOnce.Do(func() {
		start := time.Now()
		t.shutdownErr = t.shutdown(ctx)
		t.shutdownTook.Store(int64(time.Since(start)))
	})
	return t.shutdownErr
}

// exportersFinish waits for the exporters to finish shutting down, up to
// d when d > 0.
func (t *Telemetry) exportersFinish(d time.Duration) {
	var grace <-chan time.Time
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		grace = timer.C
	}
	for _, done := range t.exportersDone {
		select {
		case <-done:
		case <-grace:
			return
		}
	}
}

// ShutdownTook is how long Shutdown took: how long the command waited at
// exit for its last exports (bounded by ShutdownTimeout, then a short
// grace for the exporters to close, or with a spool the time it took to
// write to it what could not be sent); 0 before Shutdown.
func (t *Telemetry) ShutdownTook() time.Duration {
	return time.Duration(t.shutdownTook.Load())
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
	if t.spanProcessor != nil {
		// The SDK skips a processor's Shutdown when ctx has already ended
		// (a canceled parent): the queue would never be drained, nor the
		// exporter shut down, and the wait below would not end. It runs
		// once: when the SDK did call it, this returns at once.
		_ = t.spanProcessor.Shutdown(ctx)
	}
	// Exports abandoned just now end at once. Without a spool what they
	// held is dropped: give the exporters a moment to finish closing
	// (connections, files) so nothing outlives Shutdown. With one, it and
	// what the batch processor still holds go to the spool without a try:
	// wait for that to be written, however long a busy CPU takes to encode
	// it. The collector no longer counts, the work is bounded by the span
	// queue and the spool's bound, and a full disk is retried only for a
	// moment; a fixed grace here dropped spans only because the machine
	// was loaded (512 spans took 5.6s to spool at load 10-20 under -race).
	if t.spools[0] != nil || t.spools[1] != nil {
		t.exportersFinish(0)
	} else {
		t.exportersFinish(shutdownGrace)
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
		if st.LastSpanError != nil {
			err = fmt.Errorf("%w; last trace export error: %v", err, st.LastSpanError)
		}
		errs = append(errs, err)
	}
	if failed := st.MetricExportFailures - st.MetricExportsSpooled; failed > 0 {
		err := fmt.Errorf("%d of %d metric exports failed", failed, st.MetricExportFailures+st.MetricExports)
		if st.LastMetricError != nil {
			err = fmt.Errorf("%w; last metric export error: %v", err, st.LastMetricError)
		}
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: %w", err)
	}
	return nil
}
