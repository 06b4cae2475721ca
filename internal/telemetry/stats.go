package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Stats counts what happened to the telemetry since Setup. Spans are
// counted once each: every sampled span that ended is eventually exported
// or dropped; until then it is pending.
type Stats struct {
	// SpansEnded counts sampled spans that ended and entered the pipeline.
	SpansEnded int64
	// SpansExported counts spans the collector accepted (or that were
	// written to the traces file).
	SpansExported int64
	// SpansDropped counts spans lost: the queue was full when they ended
	// (see SpansQueueFull), their export failed after the exporter's own
	// retries, or, after Shutdown, they were never exported.
	SpansDropped int64
	// SpansSpooled counts spans whose export failed and that were written
	// to the spool instead (Config.SpoolDir), for `ortel replay`: neither
	// exported nor dropped.
	SpansSpooled int64
	// MetricExportsSpooled counts failed metric exports written to the
	// spool (part of MetricExportFailures).
	MetricExportsSpooled int64
	// SpansQueueFull is the part of SpansDropped that met a full queue,
	// SpansSpoolFull the part whose export failed and that met a full
	// spool (Config.SpoolMaxBytes).
	SpansQueueFull, SpansSpoolFull int64
	// SpansPending are ended spans not yet exported or dropped: queued or
	// being exported. Always 0 after Shutdown.
	SpansPending int64
	// MetricExports and MetricExportFailures count metric export attempts
	// that succeeded and failed. Metrics are cumulative, so the next
	// successful export carries what a failed one lost.
	MetricExports, MetricExportFailures int64
	// MetricsLost is true when the latest metric export failed and was not
	// spooled: metrics are cumulative, so only the readings since the last
	// successful export are lost, and only when no later export succeeds.
	MetricsLost bool
	// LastError is the most recent export error, of either signal.
	LastError error
	// LastSpanError and LastMetricError are the most recent export error
	// of each signal.
	LastSpanError, LastMetricError error
}

// Lost says what telemetry was lost, one line per signal that lost some
// ("traces: ..." and "metrics: ..."), or nil when nothing was. Read it
// after Shutdown: before, pending spans are not yet counted as lost.
func (s Stats) Lost() []string {
	var lines []string
	if s.SpansDropped > 0 {
		l := fmt.Sprintf("traces: %d of %d spans were not delivered", s.SpansDropped, s.SpansEnded)
		if s.SpansQueueFull > 0 {
			l += fmt.Sprintf(" (%d met a full queue)", s.SpansQueueFull)
		}
		if s.SpansSpoolFull > 0 {
			l += fmt.Sprintf(" (%d met a full spool)", s.SpansSpoolFull)
		}
		if s.LastSpanError != nil {
			l += "; last error: " + s.LastSpanError.Error()
		}
		lines = append(lines, l)
	}
	if s.MetricsLost {
		l := fmt.Sprintf("metrics: the last export failed (%d of %d exports failed), so the readings since the last successful one were not delivered",
			s.MetricExportFailures, s.MetricExports+s.MetricExportFailures)
		if s.LastMetricError != nil {
			l += "; last error: " + s.LastMetricError.Error()
		}
		lines = append(lines, l)
	}
	return lines
}

// Spooled says what was spooled, one line per signal that spooled some,
// or nil.
func (s Stats) Spooled() []string {
	var lines []string
	if s.SpansSpooled > 0 {
		lines = append(lines, fmt.Sprintf("traces: %d of %d spans could not be sent and were spooled", s.SpansSpooled, s.SpansEnded))
	}
	if s.MetricExportsSpooled > 0 {
		lines = append(lines, fmt.Sprintf("metrics: %d of %d exports could not be sent and were spooled", s.MetricExportsSpooled, s.MetricExports+s.MetricExportFailures))
	}
	return lines
}

// stats holds the live counters behind Stats.
type stats struct {
	spansEnded, spansExported, spansFailed, spansQueueFull atomic.Int64
	// spansInQueue counts spans handed to the batch processor that have not
	// reached the exporter yet: the queue plus the batch being assembled.
	spansInQueue                 atomic.Int64
	metricExports, metricFailure atomic.Int64
	metricLastFailed             atomic.Bool
	// spansSpooled are part of spansExported: the exporter reported them
	// sent, into the spool. metricSpooled counts collections spooled.
	spansSpooled, metricSpooled atomic.Int64
	spansSpoolFull              atomic.Int64
	final                       atomic.Bool // Shutdown finished: whatever is not exported is dropped

	mu                          sync.Mutex
	lastErr, spanErr, metricErr error
}

func (s *stats) setErr(err error, metric bool) {
	s.mu.Lock()
	s.lastErr = err
	if metric {
		s.metricErr = err
	} else {
		s.spanErr = err
	}
	s.mu.Unlock()
}

func (s *stats) snapshot() Stats {
	exported := s.spansExported.Load()
	st := Stats{
		SpansEnded:           s.spansEnded.Load(),
		SpansSpooled:         s.spansSpooled.Load(),
		MetricExportsSpooled: s.metricSpooled.Load(),
		SpansQueueFull:       s.spansQueueFull.Load(),
		SpansSpoolFull:       s.spansSpoolFull.Load(),
		MetricExports:        s.metricExports.Load(),
		MetricExportFailures: s.metricFailure.Load(),
		MetricsLost:          s.metricLastFailed.Load(),
	}
	// A span is counted spooled just before it is counted exported.
	st.SpansExported = max(0, exported-st.SpansSpooled)
	if s.final.Load() {
		st.SpansDropped = max(0, st.SpansEnded-exported)
	} else {
		st.SpansDropped = s.spansFailed.Load() + st.SpansQueueFull
		st.SpansPending = max(0, st.SpansEnded-exported-st.SpansDropped)
	}
	s.mu.Lock()
	st.LastError, st.LastSpanError, st.LastMetricError = s.lastErr, s.spanErr, s.metricErr
	s.mu.Unlock()
	return st
}

// queueSlack keeps room in the batch processor's queue for its ForceFlush
// markers, so only countingProcessor ever turns spans away.
const queueSlack = 64

// countingProcessor sits in front of the SDK's batch span processor. It
// counts ended spans and enforces the queue limit itself, dropping (and
// counting) a span when limit spans are already waiting, so the batch
// processor's own queue, sized limit+queueSlack, never overflows
// uncounted. OnEnd never blocks.
type countingProcessor struct {
	next  sdktrace.SpanProcessor
	stats *stats
	limit int64
}

func (p *countingProcessor) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	p.next.OnStart(ctx, s)
}

func (p *countingProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // the batch processor ignores these too
	}
	p.stats.spansEnded.Add(1)
	if p.stats.spansInQueue.Add(1) > p.limit {
		p.stats.spansInQueue.Add(-1)
		p.stats.spansQueueFull.Add(1)
		return
	}
	p.next.OnEnd(s)
}

func (p *countingProcessor) ForceFlush(ctx context.Context) error { return p.next.ForceFlush(ctx) }

func (p *countingProcessor) Shutdown(ctx context.Context) error { return p.next.Shutdown(ctx) }

// countingSpanExporter counts what the exporter accepts and loses, and
// abandons in-flight exports when Shutdown runs out of time (abort).
type countingSpanExporter struct {
	next     sdktrace.SpanExporter
	stats    *stats
	abort    context.Context
	done     chan struct{} // closed when Shutdown has finished
	once     sync.Once
	spooling bool // next spools what it fails to send
}

func (e *countingSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	n := int64(len(spans))
	e.stats.spansInQueue.Add(-n)
	if e.abort.Err() != nil && e.spooling {
		// Shutdown ran out of time: no try, straight to the spool (the
		// exporter fails at once on a canceled context, then spools).
		canceled, cancel := context.WithCancel(ctx)
		cancel()
		if err := e.next.ExportSpans(canceled, spans); err != nil {
			e.stats.spansFailed.Add(n)
			e.stats.setErr(err, false)
			return nil
		}
		e.stats.spansExported.Add(n)
		return nil
	}
	if e.abort.Err() != nil {
		// Shutdown ran out of time: what the batch processor still drains
		// is dropped without a try, and without an error each, which the
		// SDK would report (log) once per batch.
		e.stats.spansFailed.Add(n)
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(e.abort, cancel)
	defer stop()
	if err := e.next.ExportSpans(ctx, spans); err != nil {
		e.stats.spansFailed.Add(n)
		e.stats.setErr(err, false)
		if e.abort.Err() != nil {
			return nil // abandoned by Shutdown, which reports the drops
		}
		return err
	}
	e.stats.spansExported.Add(n)
	return nil
}

func (e *countingSpanExporter) Shutdown(ctx context.Context) error {
	defer e.once.Do(func() { close(e.done) })
	return e.next.Shutdown(ctx)
}

// countingMetricExporter counts metric exports and failures, and abandons
// an in-flight export when Shutdown runs out of time.
type countingMetricExporter struct {
	next  sdkmetric.Exporter
	stats *stats
	abort context.Context
	done  chan struct{} // closed when Shutdown has finished
	once  sync.Once
	spool *spool // where failed collections go; nil for none
	// breaker, with a spool, sends collections straight to the spool while
	// the collector is marked down (see spoolingTraceClient).
	breaker *breaker
}

func (e *countingMetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.next.Temporality(k)
}

func (e *countingMetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.next.Aggregation(k)
}

func (e *countingMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(e.abort, cancel)
	defer stop()
	if err := e.export(ctx, rm); err != nil {
		e.stats.metricFailure.Add(1)
		e.stats.setErr(err, true)
		if e.spool != nil {
			serr := spoolMetrics(e.spool, rm)
			if serr == nil {
				// In the spool, so not lost: replay delivers it.
				e.stats.metricSpooled.Add(1)
				e.stats.metricLastFailed.Store(false)
				return nil
			}
			err = fmt.Errorf("%w; spooling failed too: %v", err, serr)
			e.stats.setErr(err, true)
		}
		e.stats.metricLastFailed.Store(true)
		return err
	}
	e.stats.metricExports.Add(1)
	e.stats.metricLastFailed.Store(false)
	return nil
}

// export sends rm, or fails at once while the breaker says the collector
// is down (probing it in the background, as spoolingTraceClient does).
func (e *countingMetricExporter) export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if e.breaker == nil {
		return e.next.Export(ctx, rm)
	}
	if down, last, probe := e.breaker.state(); down {
		if probe {
			go func() {
				defer e.breaker.probes.Done()
				// An empty export: the collector answers it when it is back.
				e.breaker.record(e.next.Export(e.abort, &metricdata.ResourceMetrics{}), true)
			}()
		}
		return fmt.Errorf("the collector failed an earlier export, spooled without trying it: %w", last)
	}
	err := e.next.Export(ctx, rm)
	e.breaker.record(err, false)
	return err
}

func (e *countingMetricExporter) ForceFlush(ctx context.Context) error { return e.next.ForceFlush(ctx) }

func (e *countingMetricExporter) Shutdown(ctx context.Context) error {
	defer e.once.Do(func() { close(e.done) })
	err := e.next.Shutdown(ctx)
	if e.breaker != nil {
		e.breaker.probes.Wait() // bounded: Shutdown closed the probe's connection
	}
	if e.spool != nil {
		err = errors.Join(err, e.spool.close())
	}
	return err
}
