package thermal

import (
	"context"
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestEmitsItsTable: with every metric on, on a server's thermal zones and
// hwmon chips, the receiver emits exactly what its generated table
// (Metrics, from the semconv registry) lists: no metric, instrument kind,
// unit or attribute more or less.
func TestEmitsItsTable(t *testing.T) {
	root := procfstest.Expand(t, "testdata/server.txtar")
	mp, reader := procfstest.NewProvider(t)
	r, err := New(WithRoot(root), WithMeterProvider(mp), WithAllMetrics())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer r.Shutdown(context.Background())
	got, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertTable(t, got, Metrics())
}
