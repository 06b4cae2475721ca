package procfstest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers"
)

// Start creates a receiver with newR on a fresh MeterProvider (see
// NewProvider), shuts it down when the test ends, and returns it with a
// function that collects once (see Collect).
func Start[R receivers.Receiver](t *testing.T, newR func(metric.MeterProvider) (R, error)) (R, func() (map[string]metricdata.Metrics, error)) {
	t.Helper()
	mp, reader := NewProvider(t)
	r, err := newR(mp)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return r, func() (map[string]metricdata.Metrics, error) { return Collect(t, reader) }
}

// ReadsThisMachine creates a receiver with newR on a fresh MeterProvider
// and checks that it either says it is unsupported here (the test is then
// skipped, with the reason) or collects some metric and that snapshot, its
// Snapshot, succeeds.
func ReadsThisMachine[R receivers.Receiver](t *testing.T, newR func(metric.MeterProvider) (R, error), snapshot func(R) error) {
	t.Helper()
	mp, reader := NewProvider(t)
	r, err := newR(mp)
	if errors.Is(err, receivers.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	if got, _ := Collect(t, reader); len(got) == 0 {
		t.Error("no metrics")
	}
	if err := snapshot(r); err != nil {
		t.Error(err)
	}
}

// CollectHonoursContext checks that the callback f, given a cancelled
// context, observes nothing and returns context.Canceled, and that the
// next call, with a live context, observes something without error.
func CollectHonoursContext(t *testing.T, f metric.Callback) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var o Observer
	if err := f(ctx, &o); !errors.Is(err, context.Canceled) {
		t.Errorf("collect = %v, want context.Canceled", err)
	}
	if o.N != 0 {
		t.Errorf("%d observations after cancellation", o.N)
	}
	if err := f(t.Context(), &o); err != nil || o.N == 0 {
		t.Errorf("next collection: %v, %d observations", err, o.N)
	}
}

// ShutdownTwice calls shutdown twice, failing the test on an error from
// either call, and checks that collect then reports no metric and no
// error.
func ShutdownTwice(t *testing.T, shutdown func(context.Context) error, collect func() (map[string]metricdata.Metrics, error)) {
	t.Helper()
	for i := range 2 {
		if err := shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown #%d: %v", i+1, err)
		}
	}
	if got, err := collect(); len(got) != 0 || err != nil {
		t.Errorf("after Shutdown: %d metrics, %v; want none", len(got), err)
	}
}

// ShutdownDuringCollect checks that a receiver's Shutdown returns while
// collections run. The SDK holds its own lock while it runs a callback, and
// Unregister waits for that lock: a Shutdown that unregisters the callback
// while holding the lock the callback takes deadlocks against a collection
// in progress. start creates the receiver on mp and returns its Shutdown.
// Two subtests:
//
//   - "sdk": two goroutines collect through an SDK ManualReader without
//     pause while Shutdown runs: the real thing, but whether a collection
//     is at the wrong point at the wrong time is up to the scheduler;
//   - "lockstep": on a MeterProvider whose Unregister, like the SDK's,
//     waits for a collection in progress, and starts one at that moment,
//     the deadlock happens every time.
//
// Each fails when Shutdown has not returned 10 seconds later.
func ShutdownDuringCollect(t *testing.T, start func(t *testing.T, mp metric.MeterProvider) func(context.Context) error) {
	t.Helper()
	t.Run("sdk", func(t *testing.T) {
		mp, reader := NewProvider(t)
		shutdown := start(t, mp)
		stop := make(chan struct{})
		collecting := make(chan struct{}, 1)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					var rm metricdata.ResourceMetrics
					reader.Collect(context.Background(), &rm)
					select {
					case collecting <- struct{}{}:
					default:
					}
				}
			})
		}
		<-collecting // the collections are under way
		returns(t, shutdown)
		close(stop)
		wg.Wait()
	})
	t.Run("lockstep", func(t *testing.T) {
		returns(t, start(t, lockstepProvider{}))
	})
}

// returns fails the test when shutdown fails or has not returned after 10
// seconds.
func returns(t *testing.T, shutdown func(context.Context) error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- shutdown(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return while a collection ran: deadlock")
	}
}

// lockstepProvider is a MeterProvider whose instruments record nothing and
// whose callback registrations unregister as the SDK's do when a
// collection is in progress: Unregister waits for it to finish. Here
// Unregister starts that collection itself, so the callback always runs
// while Unregister waits.
type lockstepProvider struct{ embedded.MeterProvider }

func (lockstepProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return lockstepMeter{Meter: noop.Meter{}}
}

type lockstepMeter struct{ metric.Meter }

func (lockstepMeter) RegisterCallback(f metric.Callback, _ ...metric.Observable) (metric.Registration, error) {
	return lockstepRegistration{f: f}, nil
}

type lockstepRegistration struct {
	embedded.Registration
	f metric.Callback
}

func (r lockstepRegistration) Unregister() error {
	done := make(chan struct{})
	go func() {
		r.f(context.Background(), &Observer{})
		close(done)
	}()
	<-done
	return nil
}

// Concurrent calls a receiver's methods from several goroutines at once;
// run it under -race.
type Concurrent struct {
	// Rounds is how many times each goroutine calls the methods.
	Rounds int
	// Collect collects once; an error fails the test. When nil, each
	// round collects from Reader instead.
	Collect func() error
	Reader  *sdkmetric.ManualReader
	// Snapshot calls the receiver's Snapshot; an error fails the test.
	Snapshot func() error
	// Also calls the receiver's other methods, if set.
	Also func()
	// Shutdown, if set, runs in a fifth goroutine after Rounds
	// collections of its own, while the four others still run.
	Shutdown func()
}

// Run runs Rounds rounds of Collect, Snapshot and Also in each of four
// goroutines, and Shutdown in a fifth, and waits for them all.
func (c Concurrent) Run(t *testing.T) {
	t.Helper()
	collect := c.Collect
	if collect == nil {
		collect = func() error {
			var rm metricdata.ResourceMetrics
			return c.Reader.Collect(context.Background(), &rm)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range c.Rounds {
				if err := collect(); err != nil {
					t.Error(err)
				}
				if err := c.Snapshot(); err != nil {
					t.Error(err)
				}
				if c.Also != nil {
					c.Also()
				}
			}
		})
	}
	if c.Shutdown != nil {
		wg.Go(func() {
			for range c.Rounds {
				collect()
			}
			c.Shutdown()
		})
	}
	wg.Wait()
}
