package rapl

import (
	"context"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestEmitsItsTable: with every metric on, on a two-socket machine with
// subzones, over two collections (power needs two readings), the receiver
// emits exactly what its generated table (Metrics, from the semconv
// registry) lists: no metric, instrument kind, unit or attribute more or
// less.
func TestEmitsItsTable(t *testing.T) {
	root := procfstest.Expand(t, "testdata/xeon-2s.txtar")
	mp, reader := procfstest.NewProvider(t)
	clk := newClock()
	r, err := New(WithRoot(root), WithMeterProvider(mp), WithAllMetrics(), withClock(clk))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	clk.advance(time.Second)
	if _, err := procfstest.CollectScope(t, reader, ScopeName); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	got, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertTable(t, got, Metrics())
}
