package instrument

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel"
)

// TestCloseDuringRunConcurrentSafe closes sessions while four callers run
// them. Before the gate, Close destroyed the session under a Run in flight:
// SIGSEGV. Every Run must end with nil or ErrClosed, and Close with nil.
func TestCloseDuringRunConcurrentSafe(t *testing.T) {
	path := chainModel(t, 2, 8)
	in, err := ort.NewTensor(ort.NewShape(1, 8), make([]float32, 8))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Destroy()
	iterations := 1000
	if testing.Short() {
		iterations = 50
	}
	const callers = 4
	var runs, refused atomic.Int64
	for it := 0; it < iterations; it++ {
		// The global (no-op) providers: millions of recorded spans would
		// only slow the test down.
		s, err := NewDynamicSession(context.Background(), path, []string{"x"}, []string{"y"}, nil,
			WithModelName("closing"))
		if err != nil {
			t.Fatal(err)
		}
		var started, wg sync.WaitGroup
		errs := make(chan error, callers)
		started.Add(callers)
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, 8))
				defer out.Destroy()
				first := true
				for {
					err := s.Run(context.Background(), []ort.Value{in}, []ort.Value{out})
					if first {
						started.Done() // Close comes once every caller ran once
						first = false
					}
					if errors.Is(err, ErrClosed) {
						refused.Add(1)
						return
					}
					if err != nil {
						errs <- err
						return
					}
					runs.Add(1)
					runtime.Gosched() // let Close in on two cores
				}
			}()
		}
		started.Wait()
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("iteration %d: Close = %v", it, err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("iteration %d: Run = %v, want nil or ErrClosed", it, err)
		}
		if err := s.Run(context.Background(), []ort.Value{in}, []ort.Value{nil}); !errors.Is(err, ErrClosed) {
			t.Fatalf("Run after Close = %v, want ErrClosed", err)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("second Close = %v", err)
		}
	}
	t.Logf("%d iterations, %d callers: %d runs completed, %d refused after Close, 0 crashes",
		iterations, callers, runs.Load(), refused.Load())
}

// TestCloseBoundedByContext: a Close whose context ends while a run is in
// flight says so and leaves the session to the run, which destroys it when
// it returns.
func TestCloseBoundedByContext(t *testing.T) {
	destroyed := make(chan struct{})
	g := newGate(func() error { close(destroyed); return nil })
	if !g.enter() {
		t.Fatal("enter refused on an open gate")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := g.close(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("close with a run in flight and a done context = %v, want context.Canceled", err)
	}
	select {
	case <-destroyed:
		t.Fatal("session destroyed while a run was in flight")
	default:
	}
	if g.enter() {
		t.Fatal("enter admitted a run after close")
	}
	g.exit() // the run in flight returns
	select {
	case <-destroyed:
	default:
		t.Fatal("the last run did not destroy the closed session")
	}
	if err := g.close(context.Background()); err != nil {
		t.Fatalf("second close = %v", err)
	}
}

// TestCloseAfterProviderShutdownCountsLost: operator spans that reach a
// TracerProvider already shut down are counted and reported once, not
// dropped silently.
func TestCloseAfterProviderShutdownCountsLost(t *testing.T) {
	profilingModes(t, func(t *testing.T) {
		p := newProviders(t)
		s, in, out := chainSession(t, p, 3, 8, WithModelName("late"))
		var handled atomic.Int64
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) { handled.Add(1) }))
		defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
		ctx := context.Background()
		if s.prof.perRun {
			s.prof.emitSem <- struct{}{} // hold emission until the provider is gone
		} // (a window is read only when it closes: at Close)
		if err := s.ProfileRuns(ctx, 2); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := s.Run(ctx, in, out); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.tp.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if s.prof.perRun {
			<-s.prof.emitSem
		}
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if st := s.ProfilingStats(); st.Lost != int64(3*2) {
			t.Errorf("Lost = %d, want the 6 operator spans of the 2 profiled runs", st.Lost)
		}
		if handled.Load() != 1 {
			t.Errorf("reported %d times, want once", handled.Load())
		}
	})
}
