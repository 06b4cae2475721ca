package telemetry

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// fakeTraceClient fails while down, counting the uploads that reached it.
type fakeTraceClient struct {
	down  bool
	calls int
}

func (f *fakeTraceClient) Start(context.Context) error { return nil }
func (f *fakeTraceClient) Stop(context.Context) error  { return nil }
func (f *fakeTraceClient) UploadTraces(context.Context, []*tracepb.ResourceSpans) error {
	f.calls++
	if f.down {
		return errors.New("connection refused")
	}
	return nil
}

// After a failed export the next ones go to the spool without waiting on
// the collector; once breakerProbe has passed a background probe tries it,
// and when the probe succeeds the following batches go to the collector.
func TestSpoolingClientSkipsADownCollector(t *testing.T) {
	now := time.Unix(1700000000, 0)
	b := newBreaker()
	b.now = func() time.Time { return now }
	next := &fakeTraceClient{down: true}
	st := &stats{}
	path := filepath.Join(t.TempDir(), "traces.jsonl")
	c := spoolingTraceClient{next: next, spool: &spool{path: path, maxBytes: 1 << 20, used: &spoolUsage{}}, stats: st, breaker: b}
	batch := []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: "a"}, {Name: "b"}}}}}}
	upload := func() {
		t.Helper()
		if err := c.UploadTraces(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}

	upload() // fails, spooled, opens the breaker
	upload() // spooled without trying
	upload()
	if next.calls != 1 {
		t.Errorf("the collector was tried %d times while marked down, want once", next.calls)
	}
	if got := st.spansSpooled.Load(); got != 6 {
		t.Errorf("%d spans spooled, want 6", got)
	}
	if err := st.snapshot().LastSpanError; err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("last span error %v, want the collector's", err)
	}

	now = now.Add(breakerProbe)
	next.down = false
	upload()        // spooled; starts a probe, which succeeds
	b.probes.Wait() // the probe has ended
	upload()        // the collector again
	if next.calls != 3 {
		t.Errorf("after the probe the collector was tried %d times in all (probe included), want 3", next.calls)
	}
	if got := st.spansSpooled.Load(); got != 8 {
		t.Errorf("%d spans spooled, want 8 (4 batches while marked down)", got)
	}
	upload()
	if next.calls != 4 || st.spansSpooled.Load() != 8 {
		t.Errorf("with the collector back: %d tries, %d spooled; want 4 and still 8", next.calls, st.spansSpooled.Load())
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b2), "\n"); n != 4 {
		t.Errorf("the spool holds %d records, want 4", n)
	}
}

// TestADeadCollectorCostsOneTimeout: once an export of one signal found
// the collector dead (here ortel import's spans, through TraceClient), the
// metrics' last export at shutdown goes to the spool at once instead of
// waiting a second export timeout: `ortel import` into a dead collector
// gives up within its export timeout, not twice it. The collector is a
// black hole (accepts, never answers), so a try costs the whole timeout.
func TestADeadCollectorCostsOneTimeout(t *testing.T) {
	cleanEnv(t)
	const timeout = 4 * time.Second
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "4000")
	hole := blackHoleAddr(t)
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: t.TempDir(), Endpoint: "http://" + hole, SpoolDir: t.TempDir(), MetricInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	emit(t, tel)
	client := tel.TraceClient()
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := client.UploadTraces(ctx, []*tracepb.ResourceSpans{{}}); err == nil {
		t.Fatal("an export to a black hole succeeded")
	}
	_ = client.Stop(ctx)
	_ = tel.Shutdown(ctx)
	st := tel.Stats()
	if st.MetricExportsSpooled != 1 || st.SpansSpooled != 2 {
		t.Errorf("stats %+v, want the metrics and the 2 spans spooled", st)
	}
	// Spooling without a try takes milliseconds; trying waits the whole
	// timeout. Half of it is far above the first on any machine.
	if took := tel.ShutdownTook(); took > timeout/2 {
		t.Errorf("shutdown waited %s for a collector already found dead (export timeout %s): it tried it again", took, timeout)
	}
}

// blackHoleAddr is a loopback address that accepts connections and never
// answers.
func blackHoleAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		lis.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return lis.Addr().String()
}
