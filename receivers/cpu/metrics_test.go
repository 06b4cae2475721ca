//go:build linux

package cpu

import (
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestEmitsItsTable: with every metric on, over two collections
// (utilization needs an interval), the receiver emits exactly what its
// generated table (Metrics, from the semconv registry) lists: no metric,
// instrument kind, unit or attribute more or less.
func TestEmitsItsTable(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/xeon4")
	_, collect := newTest(t, WithRoot(root), WithAllMetrics())
	if _, err := collect(); err != nil {
		t.Fatal(err)
	}
	procfstest.Rewrite(t, root, "proc/stat", "testdata/xeon4-later")
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertTable(t, got, Metrics())
}
