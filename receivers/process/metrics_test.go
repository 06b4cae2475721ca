//go:build linux

package process

import (
	"testing"
	"time"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestEmitsItsTable: with every metric on, two processes in pods (one of
// them the agent's own, whose name and namespace the downward API gives),
// over two collections (utilization needs an interval), the receiver emits
// exactly what its generated table (Metrics, from the semconv registry)
// lists: no metric, instrument kind, unit or attribute more or less.
func TestEmitsItsTable(t *testing.T) {
	t.Setenv("K8S_POD_UID", "0b8e1a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b") // pid 200's pod
	t.Setenv("K8S_POD_NAME", "infer-0")
	t.Setenv("K8S_NAMESPACE_NAME", "ml")
	now, advance := fakeClock()
	_, collect := newTest(t, WithRoot("testdata/pods"), WithPIDs(100, 200), WithAllMetrics(), withClock(now))
	if _, err := collect(); err != nil {
		t.Fatal(err)
	}
	advance(2 * time.Second)
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertTable(t, got, Metrics())
}
