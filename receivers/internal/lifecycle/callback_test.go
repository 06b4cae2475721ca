package lifecycle

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// receiver is the smallest receiver: one gauge, observed under the
// Callback's lock, and something to release.
type receiver struct {
	cb       Callback
	gauge    metric.Float64ObservableGauge
	released int
	calls    int // callback calls that observed
	runs     int // callback calls, down or not
}

func (r *receiver) collect(_ context.Context, o metric.Observer) error {
	r.cb.Lock()
	defer r.cb.Unlock()
	r.runs++
	if r.cb.Down() {
		return nil
	}
	r.calls++
	o.ObserveFloat64(r.gauge, 42)
	return nil
}

func (r *receiver) release() error { r.released++; return nil }

func start(t *testing.T, sel procfs.Selection) (*receiver, func() (int, error)) {
	t.Helper()
	mp, reader := procfstest.NewProvider(t)
	r := &receiver{}
	in := NewInstruments(mp.Meter("test"), sel)
	Create(in, semconv.HwTemperatureName, &r.gauge, semconv.NewHwTemperature)
	if err := r.cb.Register("test", in, r.collect); err != nil {
		t.Fatal(err)
	}
	return r, func() (int, error) {
		got, err := procfstest.Collect(t, reader)
		return len(got), err
	}
}

func TestRegisterAndShutdown(t *testing.T) {
	r, collect := start(t, procfs.Selection{semconv.HwTemperatureName: true})
	if n, err := collect(); n != 1 || err != nil {
		t.Fatalf("before Shutdown: %d metrics, %v; want 1", n, err)
	}
	for i := range 2 {
		if err := r.cb.Shutdown("test", r.release); err != nil {
			t.Fatalf("Shutdown #%d: %v", i+1, err)
		}
	}
	if r.released != 1 {
		t.Errorf("released %d times, want once", r.released)
	}
	runs := r.runs
	if n, err := collect(); n != 0 || err != nil {
		t.Errorf("after Shutdown: %d metrics, %v; want none", n, err)
	}
	if r.runs != runs {
		t.Errorf("the SDK ran the callback after Shutdown: it was not unregistered")
	}
	// A collection already waiting for the lock when Shutdown began
	// observes nothing.
	var o procfstest.Observer
	r.collect(t.Context(), &o)
	if o.N != 0 {
		t.Errorf("callback observed %d points after Shutdown", o.N)
	}
}

func TestRegisterNothingWhenEveryMetricIsOff(t *testing.T) {
	r, collect := start(t, procfs.Selection{semconv.HwTemperatureName: false})
	if r.gauge != nil {
		t.Error("an instrument was created for a metric that is off")
	}
	if n, err := collect(); n != 0 || err != nil || r.calls != 0 {
		t.Errorf("collect: %d metrics, %v, %d callback calls; want none", n, err, r.calls)
	}
	if err := r.cb.Shutdown("test", r.release); err != nil || r.released != 1 {
		t.Errorf("Shutdown: %v, released %d times; want nil, once", err, r.released)
	}
}

func TestShutdownErrorNamesTheSource(t *testing.T) {
	var cb Callback
	closeErr := errors.New("bad file descriptor")
	err := cb.Shutdown("rapl", func() error { return closeErr })
	if !errors.Is(err, closeErr) || !strings.HasPrefix(err.Error(), "rapl: shutdown: ") {
		t.Errorf("Shutdown = %v, want %q wrapped as rapl: shutdown: ...", err, closeErr)
	}
}

func TestStop(t *testing.T) {
	r, collect := start(t, procfs.Selection{semconv.HwTemperatureName: true})
	r.cb.Lock()
	down := r.cb.Down()
	r.cb.Unlock()
	if down {
		t.Fatal("down before Stop")
	}
	if first, err := r.cb.Stop(); !first || err != nil {
		t.Fatalf("Stop = %v, %v; want true, nil", first, err)
	}
	if first, err := r.cb.Stop(); first || err != nil {
		t.Errorf("second Stop = %v, %v; want false, nil", first, err)
	}
	runs := r.runs
	if n, err := collect(); n != 0 || err != nil {
		t.Errorf("after Stop: %d metrics, %v; want none", n, err)
	}
	if r.runs != runs {
		t.Errorf("the SDK ran the callback after Stop: it was not unregistered")
	}
	// Shutdown after Stop releases nothing: whoever stopped releases.
	if err := r.cb.Shutdown("test", r.release); err != nil || r.released != 0 {
		t.Errorf("Shutdown after Stop: %v, released %d times; want nil, none", err, r.released)
	}
}

// TestShutdownDuringCollect: Shutdown while collections run returns. It
// deadlocks if Stop unregisters while holding the lock the callback
// takes.
func TestShutdownDuringCollect(t *testing.T) {
	procfstest.ShutdownDuringCollect(t, func(t *testing.T, mp metric.MeterProvider) func(context.Context) error {
		r := &receiver{}
		in := NewInstruments(mp.Meter("test"), procfs.Selection{semconv.HwTemperatureName: true})
		Create(in, semconv.HwTemperatureName, &r.gauge, semconv.NewHwTemperature)
		if err := r.cb.Register("test", in, r.collect); err != nil {
			t.Fatal(err)
		}
		return func(context.Context) error {
			err := r.cb.Shutdown("test", r.release)
			if r.released != 1 {
				t.Errorf("released %d times, want once", r.released)
			}
			return err
		}
	})
}

// TestRegisterLocked: the callback registered with RegisterLocked runs
// holding the lock (a receiver's other methods wait for it), observes, and
// Shutdown during collections returns (no deadlock between Stop and the
// lock the wrapper takes). Planted: a wrapper that did not take the lock
// failed "ran without the lock".
func TestRegisterLocked(t *testing.T) {
	mp, reader := procfstest.NewProvider(t)
	r := &receiver{}
	in := NewInstruments(mp.Meter("test"), procfs.Selection{semconv.HwTemperatureName: true})
	Create(in, semconv.HwTemperatureName, &r.gauge, semconv.NewHwTemperature)
	locked := 0
	err := r.cb.RegisterLocked("test", in, func(_ context.Context, o metric.Observer) error {
		if r.cb.mu.TryLock() {
			r.cb.mu.Unlock()
			t.Error("ran without the lock")
		} else {
			locked++
		}
		o.ObserveFloat64(r.gauge, 42)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := procfstest.Collect(t, reader); len(got) != 1 || err != nil || locked != 1 {
		t.Fatalf("collect: %d metrics, %v, %d locked runs; want 1, nil, 1", len(got), err, locked)
	}
	procfstest.ShutdownDuringCollect(t, func(t *testing.T, mp metric.MeterProvider) func(context.Context) error {
		r := &receiver{}
		in := NewInstruments(mp.Meter("test"), procfs.Selection{semconv.HwTemperatureName: true})
		Create(in, semconv.HwTemperatureName, &r.gauge, semconv.NewHwTemperature)
		if err := r.cb.RegisterLocked("test", in, func(_ context.Context, o metric.Observer) error {
			o.ObserveFloat64(r.gauge, 1)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return func(context.Context) error { return r.cb.Shutdown("test", r.release) }
	})
}
