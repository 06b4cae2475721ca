package perf

import (
	"context"
	"errors"
	"testing"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

func TestCollectAndSnapshotConcurrentSafe(t *testing.T) {
	mp, reader := procfstest.NewProvider(t)
	r := newReal(t, WithMeterProvider(mp), WithAllMetrics())
	defer r.Shutdown(context.Background())
	procfstest.Concurrent{
		Rounds:   50,
		Reader:   reader,
		Snapshot: func() error { _, err := r.Snapshot(); return err },
		Also:     func() { _ = r.Parts() },
	}.Run(t)
}

// BenchmarkCollect measures one collection of this process's events
// (the software events here; the hardware counters too on a machine with
// a PMU).
func BenchmarkCollect(b *testing.B) {
	mp, reader := procfstest.NewProvider(b)
	r := newReal(b, WithMeterProvider(mp), WithAllMetrics())
	defer r.Shutdown(context.Background())
	procfstest.BenchCollect(b, reader)
}

// newReal opens the receiver on this process for a test that needs real
// events. Where perf_event_open is forbidden altogether (perf_event_paranoid
// 3, a seccomp filter), New says why and the test skips: missing hardware
// or permission is not a failure.
func newReal(t testing.TB, opts ...Option) *Receiver {
	t.Helper()
	r, err := New(opts...)
	if errors.Is(err, receivers.ErrUnsupported) {
		t.Skipf("perf events cannot be opened here: %v", err)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}
