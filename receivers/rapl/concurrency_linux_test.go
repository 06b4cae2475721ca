package rapl

import (
	"context"
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

func TestCollectAndSnapshotConcurrentSafe(t *testing.T) {
	mp, reader := procfstest.NewProvider(t)
	r, err := New(WithRoot(procfstest.Expand(t, "testdata/xeon-2s.txtar")), WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	procfstest.Concurrent{
		Rounds:   50,
		Reader:   reader,
		Snapshot: func() error { _, err := r.Snapshot(); return err },
		Also:     func() { _ = r.Zones() },
	}.Run(t)
}

func BenchmarkCollect(b *testing.B) {
	mp, reader := procfstest.NewProvider(b)
	r, err := New(WithRoot(procfstest.Expand(b, "testdata/xeon-2s.txtar")), WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	procfstest.BenchCollect(b, reader)
}
