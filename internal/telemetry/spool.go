package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/otlpjson"
)

// DefaultSpoolMaxBytes bounds a spool folder (Config.SpoolMaxBytes).
const DefaultSpoolMaxBytes = 256 << 20

// The spool: when an OTLP export fails after the exporter's own retries
// (collector down, frozen, refusing), the batch is appended to an OTLP/JSON
// lines file in the spool folder — the embedded default's format — instead
// of being dropped, and `ortel replay` sends it later. The folder is bounded:
// a batch that would pass the bound is dropped and counted.

// spool is one signal's spool file, opened on first use.
type spool struct {
	path     string
	maxBytes int64
	// used is shared by both signals' spools: the bound is the folder's.
	used *spoolUsage

	mu   sync.Mutex
	sink *fileSink
}

type spoolUsage struct {
	mu    sync.Mutex
	bytes int64
}

// reserve adds n bytes if they fit under max.
func (u *spoolUsage) reserve(n, max int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.bytes+n > max {
		return false
	}
	u.bytes += n
	return true
}

var errSpoolFull = errors.New("the spool is full")

// write appends one request, or fails when the spool is full or the file
// cannot be written.
func (s *spool) write(size int, write func(*otlpjson.Writer) error) error {
	// JSON is larger than protobuf: count twice the protobuf size, a
	// conservative estimate, against the bound.
	if !s.used.reserve(int64(2*size), s.maxBytes) {
		return fmt.Errorf("%w (%s of OTLP/JSON): not written to %s", errSpoolFull, bytesText(s.maxBytes), s.path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		sink, err := openSink(s.path)
		if err != nil {
			return err
		}
		s.sink = sink
	}
	return s.sink.write(context.Background(), write)
}

func (s *spool) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		return nil
	}
	return s.sink.close()
}

func bytesText(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

// spoolingTraceClient sends through next and spools what next fails to
// send. Spans spooled are counted in stats.spansSpooled.
//
// A failed export marks the collector down: the following batches go to
// the spool at once, without trying it, and a probe (an empty export, in
// the background) tries it again every breakerProbe; when a probe
// succeeds, batches go to the collector again. Without this, every batch of
// an outage waits the whole export timeout before it is spooled: the queue
// drains at one batch per timeout (512 spans per 2-10 s) while a busy
// service ends thousands of spans a second, and the rest meet a full queue
// and are lost.
type spoolingTraceClient struct {
	next    otlptrace.Client
	spool   *spool
	stats   *stats
	breaker *breaker
}

// breakerProbe is how often a collector marked down is probed.
const breakerProbe = time.Second

// breaker remembers that the collector is down and runs the probes.
type breaker struct {
	mu        sync.Mutex
	now       func() time.Time
	down      bool
	last      error     // the failure that marked it down, or the latest probe's
	nextProbe time.Time // when the next probe may start
	probing   bool
	probes    sync.WaitGroup
}

func newBreaker() *breaker { return &breaker{now: time.Now} }

// state reports whether the collector is marked down, with the failure,
// and whether the caller should start a probe now.
func (b *breaker) state() (down bool, last error, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.down {
		return false, nil, false
	}
	if !b.probing && !b.now().Before(b.nextProbe) {
		b.probing = true
		b.probes.Add(1)
		probe = true
	}
	return true, b.last, probe
}

// record notes the outcome of an export or a probe.
func (b *breaker) record(err error, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	if err == nil {
		b.down, b.last = false, nil
		return
	}
	b.down, b.last, b.nextProbe = true, err, b.now().Add(breakerProbe)
}

func (c spoolingTraceClient) Start(ctx context.Context) error { return c.next.Start(ctx) }

func (c spoolingTraceClient) Stop(ctx context.Context) error {
	err := c.next.Stop(ctx)
	c.breaker.probes.Wait() // bounded: a probe ends at the export timeout, or when Stop closes the connection
	return errors.Join(err, c.spool.close())
}

func (c spoolingTraceClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	var err error
	if down, last, probe := c.breaker.state(); down {
		if probe {
			go func() {
				defer c.breaker.probes.Done()
				// An empty export: the collector answers it when it is back.
				c.breaker.record(c.next.UploadTraces(context.WithoutCancel(ctx), nil), true)
			}()
		}
		err = fmt.Errorf("the collector failed an earlier export, spooled without trying it: %w", last)
	} else {
		err = c.next.UploadTraces(ctx, rs)
		c.breaker.record(err, false)
		if err == nil {
			return nil
		}
	}
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: rs}
	if serr := c.spool.write(proto.Size(req), func(w *otlpjson.Writer) error { return w.WriteTraces(req) }); serr != nil {
		return fmt.Errorf("%w; spooling failed too: %v", err, serr)
	}
	c.stats.spansSpooled.Add(countSpans(rs))
	c.stats.setErr(err, false)
	return nil
}

func countSpans(rs []*tracepb.ResourceSpans) int64 {
	var n int64
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			n += int64(len(ss.GetSpans()))
		}
	}
	return n
}

// spoolMetrics writes a collection whose export failed to the spool.
func spoolMetrics(s *spool, rm *metricdata.ResourceMetrics) error {
	pb, convErr := resourceMetricsToProto(rm)
	req := &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{pb}}
	err := s.write(proto.Size(req), func(w *otlpjson.Writer) error { return w.WriteMetrics(req) })
	return errors.Join(err, convErr)
}

// SpoolFiles returns the spool files written so far (those that exist).
func (t *Telemetry) SpoolFiles() []string {
	if t.Resolved.SpoolDir == "" {
		return nil
	}
	var out []string
	for _, p := range []string{t.Resolved.SpoolTracesFile(), t.Resolved.SpoolMetricsFile()} {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}
