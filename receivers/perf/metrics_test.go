package perf

import (
	"context"
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestEmitsItsTable: with every metric on and every event counted (by
// scripted counters: a PMU cannot be assumed), over two collections (the
// ratios need an interval), the receiver emits exactly what its generated
// table (Metrics, from the semconv registry) lists: no metric, instrument
// kind, unit or attribute more or less.
func TestEmitsItsTable(t *testing.T) {
	tg := newTarget(4242)
	r := &Receiver{targets: []*target{tg}}
	for e := range events {
		n := uint64(e + 1)
		tg.fds[e] = []counter{&script{readings: []reading{
			{value: 100 * n, enabled: 10, running: 10},
			{value: 300 * n, enabled: 20, running: 20},
		}}}
		r.counted[e] = true
	}
	sel, err := procfs.Select("perf", Metrics(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	mp, reader := procfstest.NewProvider(t)
	if err := r.register(mp, sel); err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	if _, err := procfstest.CollectScope(t, reader, ScopeName); err != nil {
		t.Fatal(err)
	}
	got, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatal(err)
	}
	procfstest.AssertTable(t, got, Metrics())
}
