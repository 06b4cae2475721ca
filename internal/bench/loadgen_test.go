package bench

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ortel-dev/ortel/internal/stats"
)

// Tests of the load generator run in synctest bubbles: time moves only when
// every goroutine of the bubble waits, so a scripted request that "takes"
// 2ms (time.Sleep in the bubble) takes exactly 2ms of bubble time and no
// real time. Latencies are then exact, and the tests never sleep.

// scripted returns an execFunc whose request seq takes service(seq).
func scripted(service func(seq int) time.Duration) execFunc {
	return func(ctx context.Context, _, seq int) error {
		time.Sleep(service(seq))
		return nil
	}
}

// stall is a 2ms service time with one 200ms stall at request 50.
func stall(seq int) time.Duration {
	if seq == 50 {
		return 200 * time.Millisecond
	}
	return 2 * time.Millisecond
}

func countOver(res *phaseResult, d time.Duration) int {
	n := 0
	for _, r := range res.records {
		if r.latency > d {
			n++
		}
	}
	return n
}

// TestServerCountsQueueingNotCoordinatedOmission is the coordinated-omission
// test. The same service (2ms per request, one 200ms stall) is measured
// closed-loop and open-loop at 100 requests/s. The closed loop waits for the
// stall before issuing the next request, so the stall shows up once; in the
// open loop every request due during the stall queues behind it, so about
// 20 requests are slow and the tail shows it.
func TestServerCountsQueueingNotCoordinatedOmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		closed, err := runPhase(ctx, phase{scenario: SingleStream, workers: 1, requests: 200}, scripted(stall))
		if err != nil {
			t.Fatal(err)
		}
		open, err := runPhase(ctx, phase{scenario: Server, workers: 1, requests: 200, qps: 100, seed: 1}, scripted(stall))
		if err != nil {
			t.Fatal(err)
		}
		if n := countOver(closed, 20*time.Millisecond); n != 1 {
			t.Errorf("closed loop: %d requests over 20ms, want exactly the stalled one", n)
		}
		n := countOver(open, 20*time.Millisecond)
		if n < 10 {
			t.Errorf("open loop: %d requests over 20ms; the ~20 requests due during the 200ms stall must queue behind it", n)
		}
		closedP99 := stats.Quantile(closed.latencies(), 0.99)
		openP99 := stats.Quantile(open.latencies(), 0.99)
		if closedP99 > 0.003 || openP99 < 0.150 {
			t.Errorf("p99 closed %.4fs, open %.4fs: the stall must reach the open loop's tail only", closedP99, openP99)
		}
		if open.maxDepth < 10 {
			t.Errorf("deepest queue %d, want the requests held up by the stall", open.maxDepth)
		}
		t.Logf("closed loop: 1 slow request, p99 %.1fms; open loop: %d slow requests, p99 %.1fms, deepest queue %d",
			closedP99*1e3, n, openP99*1e3, open.maxDepth)
	})
}

// TestServerLatencyIsLindleyRecursion checks every latency of an open-loop
// phase against the single-server queue it must behave as: request i starts
// at max(arrival_i, end_{i-1}) and its latency runs from arrival_i.
func TestServerLatencyIsLindleyRecursion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		service := func(seq int) time.Duration { return time.Duration(1+seq%7) * time.Millisecond }
		const n, qps, seed = 300, 250, 42
		res, err := runPhase(context.Background(), phase{scenario: Server, workers: 1, requests: n, qps: qps, seed: seed}, scripted(service))
		if err != nil {
			t.Fatal(err)
		}
		at, _ := arrivals(qps, n, 0, seed)
		if len(res.records) != n {
			t.Fatalf("%d records, want %d", len(res.records), n)
		}
		var end time.Duration
		for i, r := range res.records {
			start := max(at[i], end)
			end = start + service(i)
			if r.seq != i || r.offset != at[i] || r.latency != end-at[i] || r.wait != start-at[i] {
				t.Fatalf("request %d: seq %d offset %v latency %v wait %v; want offset %v latency %v wait %v",
					i, r.seq, r.offset, r.latency, r.wait, at[i], end-at[i], start-at[i])
			}
		}
		if res.wall != end {
			t.Errorf("wall %v, want the last end %v", res.wall, end)
		}
	})
}

// TestServerQueueDepthIsLive reads the depth gauge while a phase runs: with
// a 100ms first request and arrivals every ~1ms, requests pile up.
func TestServerQueueDepthIsLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		depth := &queueDepth{}
		const qps, seed = 1000, 7
		at, _ := arrivals(qps, 50, 0, seed)
		var seen int64 = -1
		exec := func(ctx context.Context, _, seq int) error {
			switch seq {
			case 0:
				time.Sleep(100 * time.Millisecond)
			case 1:
				seen = depth.load()
			}
			return nil
		}
		res, err := runPhase(context.Background(), phase{scenario: Server, workers: 1, requests: 50, qps: qps, seed: seed, depth: depth}, exec)
		if err != nil {
			t.Fatal(err)
		}
		// When request 1 starts (at 100ms + arrival of 0), arrivals up to
		// then are queued except 0 and 1, which were taken.
		now := at[0] + 100*time.Millisecond
		want := int64(0)
		for _, a := range at {
			if a <= now {
				want++
			}
		}
		want -= 2
		if seen != want {
			t.Errorf("queue depth seen by request 1 = %d, want %d", seen, want)
		}
		if depth.load() != 0 {
			t.Errorf("depth %d after the phase, want 0", depth.load())
		}
		if res.maxDepth < want {
			t.Errorf("max depth %d < %d", res.maxDepth, want)
		}
	})
}

func TestServerTrialStopsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 10ms per request at 500/s: hopeless for a 5ms SLA.
		res, err := runPhase(context.Background(), phase{
			scenario: Server, workers: 1, requests: 1000, qps: 500, seed: 3,
			threshold: 5 * time.Millisecond, budget: 11,
		}, scripted(func(int) time.Duration { return 10 * time.Millisecond }))
		if err != nil {
			t.Fatal(err)
		}
		if !res.aborted || len(res.records) >= 100 || res.planned != 1000 {
			t.Errorf("aborted %t after %d of %d requests; want an early stop", res.aborted, len(res.records), res.planned)
		}
	})
}

func TestClosedLoopConcurrentSafe(t *testing.T) {
	for _, sc := range []Scenario{Concurrent, Offline} {
		t.Run(string(sc), func(t *testing.T) {
			var mu sync.Mutex
			seen := map[int]int{}
			depth := &queueDepth{}
			var maxInFlight, inFlight atomic.Int64
			exec := func(ctx context.Context, w, seq int) error {
				n := inFlight.Add(1)
				for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
				}
				mu.Lock()
				seen[seq]++
				mu.Unlock()
				inFlight.Add(-1)
				return nil
			}
			res, err := runPhase(context.Background(), phase{scenario: sc, workers: 4, requests: 400, depth: depth}, exec)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.records) != 400 || len(seen) != 400 {
				t.Fatalf("%d records, %d distinct requests, want 400", len(res.records), len(seen))
			}
			for i, r := range res.records {
				if r.seq != i || seen[i] != 1 {
					t.Fatalf("request %d: seq %d, run %d times", i, r.seq, seen[i])
				}
			}
			if depth.load() != 0 {
				t.Errorf("depth %d after the phase", depth.load())
			}
			if sc == Offline && res.maxDepth != 400 {
				t.Errorf("offline max depth %d, want all 400 queued at once", res.maxDepth)
			}
		})
	}
}

func TestServerConcurrentSafe(t *testing.T) {
	var runs atomic.Int64
	exec := func(ctx context.Context, w, seq int) error { runs.Add(1); return nil }
	res, err := runPhase(context.Background(), phase{scenario: Server, workers: 4, requests: 300, qps: 20000, seed: 1}, exec)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.records) != 300 || runs.Load() != 300 {
		t.Fatalf("%d records, %d runs, want 300", len(res.records), runs.Load())
	}
	for i, r := range res.records {
		if r.seq != i || r.latency < r.wait || r.wait < 0 {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
}

func TestClosedLoopDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		res, err := runPhase(context.Background(), phase{scenario: SingleStream, workers: 1, duration: time.Second},
			scripted(func(int) time.Duration { return 3 * time.Millisecond }))
		if err != nil {
			t.Fatal(err)
		}
		// Requests start at 0, 3, ..., 999ms: 334 of them.
		if len(res.records) != 334 || res.wall != 1002*time.Millisecond {
			t.Errorf("%d requests, wall %v; want 334 and 1.002s", len(res.records), res.wall)
		}
	})
}

func TestPhaseFailures(t *testing.T) {
	boom := errors.New("boom")
	failing := func(ctx context.Context, _, seq int) error { return boom }
	for _, sc := range []Scenario{SingleStream, Concurrent, Server} {
		t.Run(string(sc), func(t *testing.T) {
			_, err := runPhase(context.Background(), phase{scenario: sc, workers: 2, requests: 100, qps: 10000}, failing)
			if !errors.Is(err, errTooManyFailures) || !errors.Is(err, boom) {
				t.Errorf("err = %v, want too many failures wrapping the last error", err)
			}
		})
	}
	// A few failures are counted, not fatal.
	some := func(ctx context.Context, _, seq int) error {
		if seq%10 == 0 {
			return boom
		}
		return nil
	}
	res, err := runPhase(context.Background(), phase{scenario: SingleStream, requests: 100}, some)
	if err != nil || res.errors() != 10 || len(res.latencies()) != 90 {
		t.Errorf("err %v, %d errors, %d latencies", err, res.errors(), len(res.latencies()))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := runPhase(ctx, phase{scenario: Server, requests: 10, qps: 1}, some); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled server phase: err = %v", err)
	}
}

func TestArrivals(t *testing.T) {
	a, err := arrivals(200, 20000, 0, 9)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := arrivals(200, 20000, 0, 9)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same seed gave other arrivals")
		}
		if i > 0 && a[i] < a[i-1] {
			t.Fatal("arrivals not in order")
		}
	}
	mean := a[len(a)-1].Seconds() / float64(len(a))
	if math.Abs(mean-1.0/200) > 0.05/200 {
		t.Errorf("mean gap %.6fs, want 1/200 within 5%%", mean)
	}
	// Exponential gaps: the coefficient of variation is 1.
	var ss float64
	prev := time.Duration(0)
	for _, x := range a {
		g := (x - prev).Seconds() - mean
		ss += g * g
		prev = x
	}
	if cv := math.Sqrt(ss/float64(len(a))) / mean; math.Abs(cv-1) > 0.05 {
		t.Errorf("coefficient of variation of the gaps %.3f, want 1 (Poisson)", cv)
	}
	d, _ := arrivals(100, 0, 10*time.Second, 1)
	if len(d) < 900 || len(d) > 1100 || d[len(d)-1] >= 10*time.Second {
		t.Errorf("10s at 100/s gave %d arrivals, last at %v", len(d), d[len(d)-1])
	}
	for _, bad := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := arrivals(bad, 10, 0, 1); err == nil {
			t.Errorf("rate %v accepted", bad)
		}
	}
	if _, err := arrivals(1e9, 0, time.Hour, 1); err == nil {
		t.Error("a schedule of 3.6e12 arrivals was accepted")
	}
}
