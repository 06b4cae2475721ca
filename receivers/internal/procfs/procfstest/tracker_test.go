package procfstest

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"
)

// TestTracker: registrations are counted until unregistered (once, however
// often Unregister is called), and callback runs are counted.
func TestTracker(t *testing.T) {
	p := NewTracker(t)
	m := p.Meter("test")
	g, err := m.Int64ObservableGauge("g")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(g, 1)
		return nil
	}, g)
	if err != nil {
		t.Fatal(err)
	}
	if p.Live() != 1 || p.Calls() != 0 {
		t.Fatalf("registered: live %d, calls %d; want 1, 0", p.Live(), p.Calls())
	}
	if got, _ := Collect(t, p.Reader); len(got) != 1 || p.Calls() != 1 {
		t.Fatalf("collected %d metrics, %d calls; want 1, 1", len(got), p.Calls())
	}
	for range 2 {
		if err := reg.Unregister(); err != nil {
			t.Fatal(err)
		}
	}
	Collect(t, p.Reader)
	if p.Live() != 0 || p.Calls() != 1 {
		t.Errorf("unregistered twice: live %d, calls %d; want 0, 1", p.Live(), p.Calls())
	}
}
