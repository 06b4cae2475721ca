package telemetry

import (
	"bytes"
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

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// DefaultSpoolMaxBytes bounds a spool folder (Config.SpoolMaxBytes).
const DefaultSpoolMaxBytes = 256 << 20

// The spool: when an OTLP export fails after the exporter's own retries
// (collector down, frozen, refusing), the batch is appended to an OTLP/JSON
// lines file in the spool folder — the embedded default's format, written
// crash-consistently by the same sink — instead of being dropped, and
// `ortel replay` sends it later. The folder is bounded: a batch that would
// pass the bound is dropped and counted. What an earlier replay sent whole
// is reclaimed: when a spool file is opened, and when the bound is reached,
// a file whose every record was replayed is emptied (under the replay
// lock, so never while a replay sends it).

// spool is one signal's spool file, opened on first use.
type spool struct {
	path     string
	maxBytes int64
	// used is shared by both signals' spools: the bound is the folder's.
	used *spoolUsage

	mu   sync.Mutex
	sink *fileSink
	buf  bytes.Buffer // the record being written
}

// spoolUsage is the bytes held by a spool folder's files.
type spoolUsage struct {
	mu     sync.Mutex
	bytes  int64
	loaded bool
	paths  []string // the folder's spool files, counted when first used
}

// reserve adds n bytes if they fit under max. The first call counts what
// the spool files already hold (an earlier run's spool).
func (u *spoolUsage) reserve(n, max int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.loaded {
		u.loaded = true
		for _, p := range u.paths {
			if st, err := os.Stat(p); err == nil {
				u.bytes += st.Size()
			}
		}
	}
	if u.bytes+n > max {
		return false
	}
	u.bytes += n
	return true
}

// release gives back n bytes: a reservation not written, or a file emptied.
func (u *spoolUsage) release(n int64) {
	u.mu.Lock()
	u.bytes = max(0, u.bytes-n)
	u.mu.Unlock()
}

var errSpoolFull = errors.New("the spool is full")

// testSpoolHook, when set (tests), is called as each write begins: a write
// that takes long, as converting and encoding a batch does on a busy CPU.
var testSpoolHook func(proto.Message)

// write appends one request, or fails when the spool is full or the file
// cannot be written (after retrying a full disk for a moment). A request
// that fails leaves nothing in the file.
func (s *spool) write(m proto.Message) error {
	if testSpoolHook != nil {
		testSpoolHook(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
	if err := otlpjson.AppendLine(&s.buf, m); err != nil {
		return fmt.Errorf("spool to %s: %w", s.path, err)
	}
	n := int64(s.buf.Len())
	fits := s.used.reserve(n, s.maxBytes)
	if s.sink == nil && (fits || fileExists(s.path)) {
		sink, err := openSink(s.path)
		if err != nil {
			if fits {
				s.used.release(n)
			}
			return err
		}
		s.sink = sink
		// What an earlier run spooled and a replay sent since.
		if s.reclaim() > 0 && !fits {
			fits = s.used.reserve(n, s.maxBytes)
		}
	}
	if !fits && s.sink != nil && s.reclaim() > 0 {
		fits = s.used.reserve(n, s.maxBytes)
	}
	if !fits {
		return fmt.Errorf("%w (%s of OTLP/JSON, see --spool-max-mb): not written to %s", errSpoolFull, bytesText(s.maxBytes), s.path)
	}
	// Not the export's context: an export abandoned at shutdown is spooled
	// with a canceled one. The sink's own retry bound applies.
	if err := s.sink.writeLine(context.Background(), s.buf.Bytes()); err != nil {
		s.used.release(n)
		return err
	}
	return nil
}

// reclaim empties the spool file when an earlier `ortel replay` sent
// every record of it, and returns the bytes freed. s.mu is held.
func (s *spool) reclaim() int64 {
	freed, err := s.sink.emptyIfReplayed()
	if err != nil || freed == 0 {
		return 0
	}
	s.used.release(freed)
	return freed
}

func (s *spool) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		return nil
	}
	return s.sink.close()
}

// repaired says what opening the spool file repaired, "" for nothing.
func (s *spool) repaired() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sink == nil {
		return ""
	}
	return s.sink.repaired
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

// breakers hands out one breaker per collector: a failed export marks the
// collector down for every signal sent to it (and for `ortel import`'s
// spans, through Telemetry.TraceClient), so a command facing a dead
// collector waits its export timeout once, not once per signal.
type breakers struct {
	mu sync.Mutex
	by map[string]*breaker
}

// of returns the breaker of x's collector.
func (bs *breakers) of(x Exporter) *breaker {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.by == nil {
		bs.by = map[string]*breaker{}
	}
	key := x.Protocol + " " + x.Endpoint
	b := bs.by[key]
	if b == nil {
		b = newBreaker()
		bs.by[key] = b
	}
	return b
}

// breakerClient records in a breaker the outcome of every export through
// it: a client whose failures tell the other signals the collector is
// down.
type breakerClient struct {
	otlptrace.Client
	breaker *breaker
}

func (c breakerClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	err := c.Client.UploadTraces(ctx, rs)
	c.breaker.record(err, false)
	return err
}

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
	if serr := c.spool.write(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs}); serr != nil {
		if errors.Is(serr, errSpoolFull) {
			c.stats.spansSpoolFull.Add(countSpans(rs))
		}
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
	err := s.write(&colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{pb}})
	return errors.Join(err, convErr)
}

// SpoolRepairs says what opening the spool files repaired: a record a
// crash or a full disk cut short in an earlier run, removed; nil for none.
func (t *Telemetry) SpoolRepairs() []string {
	var out []string
	for _, s := range t.spools {
		if s != nil {
			if r := s.repaired(); r != "" {
				out = append(out, r)
			}
		}
	}
	return out
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
