package bench

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// syntheticLatency returns a run hook that sleeps a seeded synthetic
// latency: 10ms plus an exponential tail of mean 2ms. In a synctest
// bubble the sleep is the run's whole measured latency (the fake clock
// advances only by it), so the run is reproducible on any machine.
func syntheticLatency(seed uint64) func(int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	return func(int) {
		time.Sleep(10*time.Millisecond + time.Duration(rng.ExpFloat64()*2e6))
	}
}

// TestRunAutoStopsOnWidth: --runs auto stops at the first check where the
// p90 interval is within 5% of the estimate, and not before.
func TestRunAutoStopsOnWidth(t *testing.T) {
	model := dynModel(t)
	synctest.Test(t, func(t *testing.T) {
		auto := &AutoRuns{Percentile: 90, Width: 0.05, Limit: time.Hour}
		// The width rule alone: on a busy machine the measurement verdict
		// would rightly extend the phase.
		rep, err := Run(context.Background(), Config{
			ModelPath: model, Auto: auto, Warmup: 1, IntraOpThreads: 1, runHook: syntheticLatency(1), NoInterference: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		a := rep.Config.AutoRuns
		if a == nil || a.StoppedBy != "width" || a.Width == nil || *a.Width > 0.05 {
			t.Fatalf("auto runs %+v, want stopped by the width", a)
		}
		lat := rep.Latency.Samples
		if a.Runs != len(lat) || rep.Config.Runs != len(lat) {
			t.Errorf("auto recorded %d runs, config %d, latencies %d", a.Runs, rep.Config.Runs, len(lat))
		}
		// The check schedule: the rule held at this count and at no
		// earlier check.
		for n := autoMinRuns; n < len(lat); n = nextCheck(n) {
			if auto.satisfied(lat[:n]) {
				t.Fatalf("the rule already held after %d runs; the phase ran %d", n, len(lat))
			}
		}
		if !auto.satisfied(lat) {
			t.Error("the phase stopped but the rule does not hold on its runs")
		}
		if iv, _ := rep.Latency.Interval(90); !iv.Sufficient {
			t.Errorf("report's p90 interval %+v", iv)
		}
		if len(rep.Notes) > 0 && strings.Contains(strings.Join(rep.Notes, " "), "--runs auto") {
			t.Errorf("notes %v", rep.Notes)
		}
	})
}

// TestRunAutoStopsOnTimeLimit: p99.9 within 1% cannot be reached in 3
// seconds of 10ms runs; the phase ends at the limit and says so.
func TestRunAutoStopsOnTimeLimit(t *testing.T) {
	model := dynModel(t)
	synctest.Test(t, func(t *testing.T) {
		auto := &AutoRuns{Percentile: 99.9, Width: 0.01, Limit: 3 * time.Second}
		rep, err := Run(context.Background(), Config{
			ModelPath: model, Auto: auto, Warmup: 1, IntraOpThreads: 1, runHook: syntheticLatency(2),
		})
		if err != nil {
			t.Fatal(err)
		}
		a := rep.Config.AutoRuns
		if a == nil || a.StoppedBy != "time limit" {
			t.Fatalf("auto runs %+v, want stopped by the time limit", a)
		}
		// At least 10ms each: no more than 300 runs fit in 3s.
		if n := len(rep.Latency.Samples); n > 300 || n < 100 {
			t.Errorf("%d runs in a 3s limit of 10-30ms runs", n)
		}
		if !strings.Contains(strings.Join(rep.Notes, " "), "--runs auto stopped by its time limit") {
			t.Errorf("notes %v lack the time limit", rep.Notes)
		}
		if iv, _ := rep.Latency.Interval(99.9); iv.Sufficient {
			t.Errorf("p99.9 from %d runs marked sufficient", len(rep.Latency.Samples))
		}
	})
}

// TestClosedLoopUntil: the rule is evaluated at 20, 30, 40, 50... runs and
// the phase stops at the first check where it holds.
func TestClosedLoopUntil(t *testing.T) {
	var calls atomic.Int64
	p := phase{scenario: SingleStream, workers: 1, requests: 1000, until: func(lat []float64) bool {
		calls.Add(1)
		return len(lat) >= 45
	}}
	res, err := runPhase(context.Background(), p, func(context.Context, int, int) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(res.records) != 50 || calls.Load() != 4 || res.timedOut {
		t.Errorf("%d runs, %d checks, timed out %v; want 50 runs after 4 checks (20, 30, 40, 50)", len(res.records), calls.Load(), res.timedOut)
	}
}

func TestAutoRunsRejected(t *testing.T) {
	for _, c := range []Config{
		{Auto: &AutoRuns{}, Scenario: Server, QPS: 5},
		{Auto: &AutoRuns{}, Scenario: Offline},
		{Auto: &AutoRuns{Percentile: 100}},
		{Auto: &AutoRuns{}, Generate: 4},
	} {
		c.defaults()
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "Auto") {
			t.Errorf("%+v: err %v, want one naming Auto", c, err)
		}
	}
}
