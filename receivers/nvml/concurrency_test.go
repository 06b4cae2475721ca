//go:build linux && cgo

package nvml

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

func TestCollectAndSnapshotConcurrentSafe(t *testing.T) {
	m, script := twoGPUs()
	h := start(t, m)
	h.ready()
	procfstest.Concurrent{
		Rounds:   25,
		Reader:   h.reader,
		Snapshot: func() error { _, err := h.r.Snapshot(context.Background()); return err },
		Also: func() {
			_ = h.r.Devices()
			h.step(script)
		},
	}.Run(t)
}

// TestShutdownDuringCollect: Shutdown while collections run returns, and
// shuts NVML down once.
func TestShutdownDuringCollect(t *testing.T) {
	procfstest.ShutdownDuringCollect(t, func(t *testing.T, mp metric.MeterProvider) func(context.Context) error {
		m, _ := twoGPUs()
		r, err := New(WithInterface(m.lib), WithMeterProvider(mp), WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Ready(context.Background()); err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context) error {
			err := r.Shutdown(ctx)
			if n := len(m.lib.ShutdownCalls()); n != 1 {
				t.Errorf("nvml Shutdown called %d times, want 1", n)
			}
			return err
		}
	})
}

// BenchmarkCollect measures one collection of the two scripted GPUs: the
// receiver's own cost around NVML calls that return at once.
func BenchmarkCollect(b *testing.B) {
	m, _ := twoGPUs()
	mp, reader := procfstest.NewProvider(b)
	r, err := New(WithInterface(m.lib), WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	if err := r.Ready(context.Background()); err != nil {
		b.Fatal(err)
	}
	procfstest.BenchCollect(b, reader)
}
