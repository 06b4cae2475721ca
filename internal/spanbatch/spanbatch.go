// Package spanbatch is a span processor that batches ended spans for an
// exporter without waking a goroutine for each span.
//
// The SDK's BatchSpanProcessor hands every ended span to its export
// goroutine through a channel. That goroutine sleeps between spans, so each
// span.End wakes it: on a machine with few cores, next to an inference Run
// that has just left the CPU, the wake-up (futex, scheduler, a thread woken
// on the other core, then put back to sleep) costs more CPU than the span
// itself. Measured on Silero VAD (85 µs Runs, 2 cores), tracing every Run
// with the SDK batcher added 30-40 µs of CPU per Run; see the package
// benchmarks in instrument.
//
// This processor appends ended spans to a slice under a mutex and lets its
// export goroutine sleep until the batch is full (one wake-up per
// MaxExportBatchSize spans) or the schedule delay elapses. Spans beyond
// MaxQueueSize are dropped and counted (Dropped), never blocking the caller.
package spanbatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Defaults, the same as the SDK's BatchSpanProcessor.
const (
	DefaultMaxQueueSize       = 2048
	DefaultMaxExportBatchSize = 512
	DefaultScheduleDelay      = 5 * time.Second
	DefaultExportTimeout      = 30 * time.Second
)

// Options configure a Processor. Zero values take the defaults.
type Options struct {
	MaxQueueSize       int           // spans held at most; more are dropped
	MaxExportBatchSize int           // spans per export; a full batch wakes the exporter
	ScheduleDelay      time.Duration // longest a span waits for export
	ExportTimeout      time.Duration // bound of one export call
}

// Processor batches ended spans for exp. It is safe for concurrent use.
type Processor struct {
	exp  sdktrace.SpanExporter
	opts Options

	mu      sync.Mutex
	queue   []sdktrace.ReadOnlySpan
	spare   []sdktrace.ReadOnlySpan // the other buffer, swapped in at export
	stopped bool

	exportMu sync.Mutex // one export at a time, in order
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	dropped  atomic.Int64
	warned   atomic.Bool
	stopOnce sync.Once
}

var _ sdktrace.SpanProcessor = (*Processor)(nil)

// New returns a Processor exporting to exp and starts its export goroutine.
func New(exp sdktrace.SpanExporter, o Options) *Processor {
	if o.MaxQueueSize <= 0 {
		o.MaxQueueSize = DefaultMaxQueueSize
	}
	if o.MaxExportBatchSize <= 0 {
		o.MaxExportBatchSize = DefaultMaxExportBatchSize
	}
	o.MaxExportBatchSize = min(o.MaxExportBatchSize, o.MaxQueueSize)
	if o.ScheduleDelay <= 0 {
		o.ScheduleDelay = DefaultScheduleDelay
	}
	if o.ExportTimeout <= 0 {
		o.ExportTimeout = DefaultExportTimeout
	}
	p := &Processor{
		exp: exp, opts: o,
		queue: make([]sdktrace.ReadOnlySpan, 0, o.MaxExportBatchSize),
		kick:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go p.loop()
	return p
}

// OnStart does nothing.
func (p *Processor) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

// OnEnd queues a sampled span. It never blocks on the exporter.
func (p *Processor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return
	}
	p.mu.Lock()
	if p.stopped || len(p.queue) >= p.opts.MaxQueueSize {
		p.mu.Unlock()
		p.drop(1)
		return
	}
	p.queue = append(p.queue, s)
	full := len(p.queue) == p.opts.MaxExportBatchSize
	p.mu.Unlock()
	if full {
		select {
		case p.kick <- struct{}{}:
		default: // already kicked
		}
	}
}

// drop counts spans that could not be queued and says so once.
func (p *Processor) drop(n int64) {
	p.dropped.Add(n)
	if p.warned.CompareAndSwap(false, true) {
		otel.Handle(fmt.Errorf("spanbatch: the span queue (%d) is full or shut down: spans are dropped (counted)", p.opts.MaxQueueSize))
	}
}

// Dropped returns the spans dropped so far.
func (p *Processor) Dropped() int64 { return p.dropped.Load() }

func (p *Processor) loop() {
	defer close(p.done)
	t := time.NewTimer(p.opts.ScheduleDelay)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-p.kick:
		case <-t.C:
		}
		if err := p.export(context.Background()); err != nil {
			otel.Handle(err)
		}
		t.Reset(p.opts.ScheduleDelay)
	}
}

// export sends everything queued, in batches.
func (p *Processor) export(ctx context.Context) error {
	p.exportMu.Lock()
	defer p.exportMu.Unlock()
	p.mu.Lock()
	all := p.queue
	p.queue = p.spare[:0]
	p.spare = nil
	p.mu.Unlock()
	var errs []error
	for rest := all; len(rest) > 0; {
		n := min(len(rest), p.opts.MaxExportBatchSize)
		ectx, cancel := context.WithTimeout(ctx, p.opts.ExportTimeout)
		if err := p.exp.ExportSpans(ectx, rest[:n]); err != nil {
			errs = append(errs, err)
		}
		cancel()
		rest = rest[n:]
	}
	// Keep the drained buffer for the next swap, without its spans; a buffer
	// grown far past a batch is left to the collector.
	clear(all)
	if cap(all) <= 4*p.opts.MaxExportBatchSize {
		p.mu.Lock()
		p.spare = all[:0]
		p.mu.Unlock()
	}
	return errors.Join(errs...)
}

// ForceFlush exports every queued span now.
func (p *Processor) ForceFlush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return p.export(ctx)
}

// Shutdown exports what is queued, stops the export goroutine and shuts
// the exporter down. Spans ended afterwards are dropped and counted.
func (p *Processor) Shutdown(ctx context.Context) error {
	var err error
	p.stopOnce.Do(func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
		close(p.stop)
		// The rest of the queue and the exporter's shutdown go on even when
		// ctx ends first (as with the SDK's batcher): an exporter that can
		// no longer deliver still accounts for what it is handed (ortel's
		// spools it), instead of the queue vanishing with the goroutine.
		finished := make(chan error, 1)
		go func() {
			<-p.done
			finished <- errors.Join(p.export(ctx), p.exp.Shutdown(ctx))
		}()
		select {
		case err = <-finished:
		case <-ctx.Done():
			err = ctx.Err()
		}
	})
	return err
}
