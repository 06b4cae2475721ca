package telemetry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
// the collector, until breakerProbe has passed; then one tries it again,
// and a success sends the following ones to the collector again.
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
	upload() // probes, succeeds
	upload()
	if next.calls != 3 {
		t.Errorf("after the probe interval the collector was tried %d times in all, want 3", next.calls)
	}
	if got := st.spansSpooled.Load(); got != 6 {
		t.Errorf("%d spans spooled after the collector came back, want still 6", got)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	b2, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b2), "\n"); n != 3 {
		t.Errorf("the spool holds %d records, want 3", n)
	}
}
