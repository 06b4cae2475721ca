// Package spanbatch is a span processor that batches ended spans for any
// exporter without waking a goroutine for each span: a drop-in for the
// OpenTelemetry SDK's BatchSpanProcessor in a service that traces short,
// frequent operations (an inference Run of tens of microseconds).
//
//	exp, err := otlptracegrpc.New(ctx)
//	...
//	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanbatch.New(exp)))
//
// The SDK's BatchSpanProcessor hands every ended span to its export
// goroutine through a channel. That goroutine sleeps between spans, so each
// span.End wakes it: on a machine with few cores, next to an inference Run
// that has just left the CPU, the wake-up (futex, scheduler, a thread woken
// on the other core, then put back to sleep) costs more CPU than the span
// itself. Measured on Silero VAD (85 µs Runs, 2 cores), tracing every Run
// with the SDK batcher added +33% to +56% CPU per Run, this processor +6%
// to +15% (docs/sdk-batcher-wakeups.md has the figures and the cause).
//
// This processor appends ended spans to a slice under a mutex and lets its
// export goroutine sleep until the batch is full (one wake-up per
// MaxExportBatchSize spans) or the batch timeout elapses. Spans beyond the
// queue size are dropped and counted (Dropped), never blocking the caller.
//
// It reads the SDK's environment variables, then its options win:
//
//	OTEL_BSP_MAX_QUEUE_SIZE         spans held at most (default 2048)
//	OTEL_BSP_MAX_EXPORT_BATCH_SIZE  spans per export, and a full batch wakes the exporter (default 512)
//	OTEL_BSP_SCHEDULE_DELAY         longest a span waits for export, milliseconds (default 5000)
//	OTEL_BSP_EXPORT_TIMEOUT         bound of one export, milliseconds (default 30000)
//
// A bad value is reported once through otel.Handle and the default is
// used. The package lives under instrument as an SDK-side companion (like
// instrument/views): package instrument itself uses the OpenTelemetry API
// only.
//
// The package emits no telemetry of its own.
package spanbatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
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

// The SDK's environment variables this processor reads.
const (
	EnvMaxQueueSize       = "OTEL_BSP_MAX_QUEUE_SIZE"
	EnvMaxExportBatchSize = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
	EnvScheduleDelay      = "OTEL_BSP_SCHEDULE_DELAY"
	EnvExportTimeout      = "OTEL_BSP_EXPORT_TIMEOUT"
)

// config is what New is given: defaults, then the environment, then options.
type config struct {
	maxQueueSize       int
	maxExportBatchSize int
	scheduleDelay      time.Duration
	exportTimeout      time.Duration
}

// Option configures a Processor.
type Option func(*config)

// WithMaxQueueSize bounds the spans held waiting for export; more are
// dropped and counted. Default OTEL_BSP_MAX_QUEUE_SIZE, else 2048.
func WithMaxQueueSize(n int) Option { return func(c *config) { c.maxQueueSize = n } }

// WithMaxExportBatchSize sets the spans per export; a full batch wakes the
// export goroutine. Default OTEL_BSP_MAX_EXPORT_BATCH_SIZE, else 512;
// never more than the queue size.
func WithMaxExportBatchSize(n int) Option { return func(c *config) { c.maxExportBatchSize = n } }

// WithBatchTimeout sets the longest a span waits for export when its batch
// does not fill. Default OTEL_BSP_SCHEDULE_DELAY, else 5s.
func WithBatchTimeout(d time.Duration) Option { return func(c *config) { c.scheduleDelay = d } }

// WithExportTimeout bounds one export call. Default
// OTEL_BSP_EXPORT_TIMEOUT, else 30s.
func WithExportTimeout(d time.Duration) Option { return func(c *config) { c.exportTimeout = d } }

// newConfig applies defaults, then getenv's OTEL_BSP_* values, then opts.
// Values that are not positive fall back to the default.
func newConfig(getenv func(string) string, opts []Option) config {
	c := config{
		maxQueueSize:       DefaultMaxQueueSize,
		maxExportBatchSize: DefaultMaxExportBatchSize,
		scheduleDelay:      DefaultScheduleDelay,
		exportTimeout:      DefaultExportTimeout,
	}
	var bad []string
	envInt := func(name string, dst *int) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			*dst = n
		} else {
			bad = append(bad, fmt.Sprintf("%s=%q (want a whole number above 0)", name, v))
		}
	}
	envMillis := func(name string, dst *time.Duration) {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			return
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n <= int64(24*time.Hour/time.Millisecond) {
			*dst = time.Duration(n) * time.Millisecond
		} else {
			bad = append(bad, fmt.Sprintf("%s=%q (want milliseconds between 1 and 86400000)", name, v))
		}
	}
	envInt(EnvMaxQueueSize, &c.maxQueueSize)
	envInt(EnvMaxExportBatchSize, &c.maxExportBatchSize)
	envMillis(EnvScheduleDelay, &c.scheduleDelay)
	envMillis(EnvExportTimeout, &c.exportTimeout)
	if len(bad) > 0 {
		otel.Handle(fmt.Errorf("spanbatch: ignored, the default is used: %s", strings.Join(bad, "; ")))
	}
	for _, o := range opts {
		o(&c)
	}
	if c.maxQueueSize <= 0 {
		c.maxQueueSize = DefaultMaxQueueSize
	}
	if c.maxExportBatchSize <= 0 {
		c.maxExportBatchSize = DefaultMaxExportBatchSize
	}
	c.maxExportBatchSize = min(c.maxExportBatchSize, c.maxQueueSize)
	if c.scheduleDelay <= 0 {
		c.scheduleDelay = DefaultScheduleDelay
	}
	if c.exportTimeout <= 0 {
		c.exportTimeout = DefaultExportTimeout
	}
	return c
}

// Processor batches ended spans for exp. It is safe for concurrent use.
type Processor struct {
	exp  sdktrace.SpanExporter
	opts config

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

// New returns a Processor exporting to exp, configured by the OTEL_BSP_*
// variables and opts, and starts its export goroutine. Shut it down (or
// the TracerProvider it is registered with) to stop the goroutine.
func New(exp sdktrace.SpanExporter, opts ...Option) *Processor {
	o := newConfig(os.Getenv, opts)
	p := &Processor{
		exp: exp, opts: o,
		queue: make([]sdktrace.ReadOnlySpan, 0, o.maxExportBatchSize),
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
	if p.stopped || len(p.queue) >= p.opts.maxQueueSize {
		p.mu.Unlock()
		p.drop(1)
		return
	}
	p.queue = append(p.queue, s)
	full := len(p.queue) == p.opts.maxExportBatchSize
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
		otel.Handle(fmt.Errorf("spanbatch: the span queue (%d) is full or shut down: spans are dropped (counted)", p.opts.maxQueueSize))
	}
}

// Dropped returns the spans dropped so far.
func (p *Processor) Dropped() int64 { return p.dropped.Load() }

func (p *Processor) loop() {
	defer close(p.done)
	t := time.NewTimer(p.opts.scheduleDelay)
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
		t.Reset(p.opts.scheduleDelay)
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
		n := min(len(rest), p.opts.maxExportBatchSize)
		ectx, cancel := context.WithTimeout(ctx, p.opts.exportTimeout)
		if err := p.exp.ExportSpans(ectx, rest[:n]); err != nil {
			errs = append(errs, err)
		}
		cancel()
		rest = rest[n:]
	}
	// Keep the drained buffer for the next swap, without its spans; a buffer
	// grown far past a batch is left to the collector.
	clear(all)
	if cap(all) <= 4*p.opts.maxExportBatchSize {
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
