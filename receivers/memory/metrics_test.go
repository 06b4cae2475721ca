//go:build linux

package memory

import (
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestEmitsItsTable: with every metric on, on a machine with swap, the
// receiver emits exactly what its generated table (Metrics, from the
// semconv registry) lists: no metric, instrument kind, unit or attribute
// more or less.
func TestEmitsItsTable(t *testing.T) {
	_, collect := newTest(t, WithRoot("testdata/swap"), WithAllMetrics())
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertTable(t, got, Metrics())
}
