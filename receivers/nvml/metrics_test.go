//go:build linux && cgo

package nvml

import (
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestEmitsItsTable: with every metric on, on the scripted H100 and T4,
// over two collections (GPM metrics need two samples), the receiver emits
// exactly what its generated table (Metrics, from the semconv registry)
// lists: no metric, instrument kind, unit or attribute more or less.
func TestEmitsItsTable(t *testing.T) {
	m, script := twoGPUs()
	h := start(t, m, WithAllMetrics())
	h.ready()
	if _, err := procfstest.CollectScope(t, h.reader, ScopeName); err != nil {
		t.Fatal(err)
	}
	h.step(script)
	got, err := procfstest.CollectScope(t, h.reader, ScopeName)
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertTable(t, got, Metrics())
}
