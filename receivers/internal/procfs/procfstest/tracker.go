package procfstest

import (
	"context"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ortel-dev/ortel/receivers"
)

// Tracker is an SDK MeterProvider, read by Reader, that watches the
// callbacks registered through it: how many are registered and not yet
// unregistered, and how many times the SDK ran them. A receiver whose
// Shutdown forgets to unregister its callback still observes nothing
// afterwards (the callback sees it is down), so only the registrations
// themselves show the leak.
type Tracker struct {
	embedded.MeterProvider
	mp     *sdkmetric.MeterProvider
	Reader *sdkmetric.ManualReader

	mu    sync.Mutex
	live  int // registered and not unregistered
	calls int // callback runs
}

// NewTracker returns a Tracker with a ManualReader, shut down when the
// test ends.
func NewTracker(t testing.TB) *Tracker {
	t.Helper()
	mp, r := NewProvider(t)
	return &Tracker{mp: mp, Reader: r}
}

// Meter returns the SDK's meter with RegisterCallback watched.
func (p *Tracker) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return trackedMeter{Meter: p.mp.Meter(name, opts...), p: p}
}

// Live is the number of callbacks registered and not unregistered.
func (p *Tracker) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// Calls is the number of times the SDK ran a registered callback.
func (p *Tracker) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

type trackedMeter struct {
	metric.Meter
	p *Tracker
}

func (m trackedMeter) RegisterCallback(f metric.Callback, obs ...metric.Observable) (metric.Registration, error) {
	p := m.p
	reg, err := m.Meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		p.mu.Lock()
		p.calls++
		p.mu.Unlock()
		return f(ctx, o)
	}, obs...)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.live++
	p.mu.Unlock()
	return &trackedRegistration{Registration: reg, p: p}, nil
}

type trackedRegistration struct {
	metric.Registration
	p    *Tracker
	once sync.Once
}

func (r *trackedRegistration) Unregister() error {
	err := r.Registration.Unregister()
	if err == nil {
		r.once.Do(func() {
			r.p.mu.Lock()
			r.p.live--
			r.p.mu.Unlock()
		})
	}
	return err
}

// ShutdownUnregisters creates a receiver with newR on a Tracker, collects
// once (its callback must run), shuts it down and collects again: every
// callback it registered must be unregistered and must not run again.
func ShutdownUnregisters[R receivers.Receiver](t *testing.T, newR func(metric.MeterProvider) (R, error)) {
	t.Helper()
	p := NewTracker(t)
	r, err := newR(p)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	if got, _ := Collect(t, p.Reader); len(got) == 0 {
		t.Fatal("no metrics before Shutdown")
	}
	if p.Live() == 0 || p.Calls() == 0 {
		t.Fatalf("before Shutdown: %d callbacks registered, %d runs; want some", p.Live(), p.Calls())
	}
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	before := p.Calls()
	if got, err := Collect(t, p.Reader); len(got) != 0 || err != nil {
		t.Errorf("after Shutdown: %d metrics, %v; want none", len(got), err)
	}
	if n := p.Live(); n != 0 {
		t.Errorf("after Shutdown: %d callbacks still registered; Shutdown must unregister them", n)
	}
	if n := p.Calls() - before; n != 0 {
		t.Errorf("after Shutdown: the SDK ran a callback %d times; it must be unregistered", n)
	}
}
