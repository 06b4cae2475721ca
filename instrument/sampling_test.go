package instrument

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// profilingModes runs f with per-run profiling (when the loaded ONNX Runtime
// has it) and with session-copy windows (the 1.24 path).
func profilingModes(t *testing.T, f func(t *testing.T)) {
	for _, windows := range []bool{false, true} {
		name := "per-run"
		if windows {
			name = "windows"
		}
		t.Run(name, func(t *testing.T) {
			windowsOnly.Store(windows)
			defer windowsOnly.Store(false)
			f(t)
		})
	}
}

// runConcurrently runs s from callers goroutines, each runs times.
func runConcurrently(t *testing.T, s *DynamicSession, in []ort.Value, callers, runs int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for w := 0; w < callers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs := []ort.Value{nil}
			for i := 0; i < runs; i++ {
				if err := s.Run(context.Background(), in, outs); err != nil {
					errs <- err
					return
				}
				outs[0].Destroy()
				outs[0] = nil
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// profiledRunsWithOperators counts the run spans marked profiled, and those
// of them that have operator spans as children.
func profiledRunsWithOperators(p *providers, runName string) (profiled, withOps int) {
	kids := childrenOf(p.spans)
	for _, r := range spansNamed(p.spans, runName) {
		if attrs(r.Attributes())[attrRunProfiled].AsBool() {
			profiled++
			if len(kids[r.SpanContext().SpanID()]) > 0 {
				withOps++
			}
		}
	}
	return profiled, withOps
}

// TestSamplingExactConcurrentSafe: every 3rd of 120 runs from 4 callers is
// profiled and carries operator spans, 40 of 40. Before, a sampled run that
// found no window ready, or the window busy, ran unprofiled (3 of 8).
func TestSamplingExactConcurrentSafe(t *testing.T) {
	profilingModes(t, func(t *testing.T) {
		p := newProviders(t)
		s, in, _ := chainSession(t, p, 3, 8, WithModelName("exact"),
			WithProfiling(Profiling{EveryN: 3, WindowRuns: 4}))
		const callers, each = 4, 30
		runConcurrently(t, s, in, callers, each)
		if err := s.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := callers * each / 3
		profiled, withOps := profiledRunsWithOperators(p, "run exact")
		st := s.ProfilingStats()
		t.Logf("per-run=%v: selected %d, profiled %d, with operator spans %d, missed %d, spans %d",
			st.PerRun, st.Selected, profiled, withOps, st.Missed, st.Spans)
		if profiled != want || withOps != want {
			t.Errorf("%d runs profiled, %d with operator spans; want %d and %d", profiled, withOps, want, want)
		}
		if st.Selected != int64(want) || st.Profiled != int64(want) || st.Missed != 0 || st.Emitted != int64(want) {
			t.Errorf("stats %+v, want %d selected, profiled and emitted, none missed", st, want)
		}
	})
}

// TestRatioSamplingEveryProfiledRunHasOperators: with a probability, the
// count varies, but every run marked profiled has its operators.
func TestRatioSamplingEveryProfiledRunHasOperators(t *testing.T) {
	p := newProviders(t)
	s, in, _ := chainSession(t, p, 2, 8, WithModelName("ratio"),
		WithProfiling(Profiling{Ratio: 0.25}))
	runConcurrently(t, s, in, 4, 25)
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	profiled, withOps := profiledRunsWithOperators(p, "run ratio")
	if st := s.ProfilingStats(); int64(profiled) != st.Selected || withOps != profiled {
		t.Errorf("selected %d, profiled %d, with operators %d: want all equal", st.Selected, profiled, withOps)
	}
}

// TestSlowRunProfilesTheNextRuns: a run slower than SlowRun profiles the
// next TailRuns runs, and the trigger is rate-limited.
func TestSlowRunProfilesTheNextRuns(t *testing.T) {
	profilingModes(t, func(t *testing.T) {
		p := newProviders(t)
		// Every run is slower than 1ns: the first triggers, the rest fall in
		// the hour-long interval.
		s, in, out := chainSession(t, p, 2, 8, WithModelName("tail"),
			WithProfiling(Profiling{SlowRun: time.Nanosecond, TailRuns: 3, TriggerInterval: time.Hour}))
		for i := 0; i < 10; i++ {
			if err := s.Run(context.Background(), in, out); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.TriggerProfiling(2); !errors.Is(err, ErrRateLimited) {
			t.Errorf("TriggerProfiling within the interval = %v, want ErrRateLimited", err)
		}
		if err := s.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		runs := spansNamed(p.spans, "run tail")
		var marks string
		for _, r := range runs {
			marks += fmt.Sprint(b2i(attrs(r.Attributes())[attrRunProfiled].AsBool()))
		}
		if marks != "0111000000" {
			t.Errorf("profiled runs in order = %s, want 0111000000 (the 3 after the first slow run)", marks)
		}
		if _, withOps := profiledRunsWithOperators(p, "run tail"); withOps != 3 {
			t.Errorf("%d triggered runs have operator spans, want 3", withOps)
		}
		if st := s.ProfilingStats(); st.Triggers != 1 {
			t.Errorf("triggers = %d, want 1", st.Triggers)
		}
	})
}

func TestTriggerProfiling(t *testing.T) {
	p := newProviders(t)
	s, in, out := chainSession(t, p, 2, 8, WithModelName("ondemand"),
		WithProfiling(Profiling{TriggerInterval: time.Hour}))
	if err := s.TriggerProfiling(2); err != nil {
		t.Fatal(err)
	}
	if err := s.TriggerProfiling(2); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("second trigger = %v, want ErrRateLimited", err)
	}
	for i := 0; i < 4; i++ {
		if err := s.Run(context.Background(), in, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if profiled, withOps := profiledRunsWithOperators(p, "run ondemand"); profiled != 2 || withOps != 2 {
		t.Errorf("profiled %d, with operators %d; want 2 and 2", profiled, withOps)
	}
}

// TestFlushDeliversOpenWindow: on the 1.24 path, Flush emits the runs of a
// window that is still open (it used to leave them until the window closed).
func TestFlushDeliversOpenWindow(t *testing.T) {
	windowsOnly.Store(true)
	defer windowsOnly.Store(false)
	p := newProviders(t)
	s, in, out := chainSession(t, p, 2, 8, WithModelName("flush"),
		WithProfiling(Profiling{EveryN: 2, WindowRuns: 100, WindowAge: time.Hour}))
	for i := 0; i < 6; i++ {
		if err := s.Run(context.Background(), in, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, withOps := profiledRunsWithOperators(p, "run flush"); withOps != 3 {
		t.Errorf("after Flush %d runs have operator spans, want 3", withOps)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
