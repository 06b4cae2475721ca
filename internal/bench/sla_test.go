package bench

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

func TestParseSLA(t *testing.T) {
	tests := []struct {
		in      string
		want    SLA
		wantErr string
	}{
		{"20ms", SLA{20 * time.Millisecond, 99}, ""},
		{"20ms@p95", SLA{20 * time.Millisecond, 95}, ""},
		{" 1.5s @ p99.9 ", SLA{1500 * time.Millisecond, 99.9}, ""},
		{"250us@P50", SLA{250 * time.Microsecond, 50}, ""},
		{"20", SLA{}, "not a positive duration"},
		{"-5ms", SLA{}, "not a positive duration"},
		{"0s", SLA{}, "not a positive duration"},
		{"20ms@p100", SLA{}, "between 0 and 100"},
		{"20ms@p0", SLA{}, "between 0 and 100"},
		{"20ms@99x", SLA{}, "between 0 and 100"},
		{"", SLA{}, "not a positive duration"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSLA(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
			if back, err := ParseSLA(got.String()); err != nil || back != got {
				t.Errorf("String %q does not parse back: %+v %v", got.String(), back, err)
			}
		})
	}
}

func ms(xs ...float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / 1000
	}
	return out
}

func TestSLACheck(t *testing.T) {
	hundred := func(slow int, slowMS float64) []float64 {
		out := make([]float64, 100)
		for i := range out {
			out[i] = 0.010
			if i < slow {
				out[i] = slowMS / 1000
			}
		}
		return out
	}
	p99 := SLA{20 * time.Millisecond, 99}
	tests := []struct {
		name       string
		sla        SLA
		lat        []float64
		failed     int
		violations int
		met        bool
		observed   float64 // seconds; -1: on a failed request
	}{
		{"all fast", p99, hundred(0, 0), 0, 0, true, 0.010},
		{"one slow of 100 is allowed at p99", p99, hundred(1, 50), 0, 1, true, 0.010},
		{"two slow of 100 miss p99", p99, hundred(2, 50), 0, 2, false, 0.050},
		{"at the threshold is within", p99, hundred(5, 20), 0, 0, true, 0.020},
		{"a failure counts as a violation", p99, hundred(1, 50)[:99], 1, 2, false, 0.050},
		{"the rank falls on a failure", p99, hundred(0, 0)[:98], 2, 2, false, -1},
		{"p50 allows half", SLA{20 * time.Millisecond, 50}, ms(10, 30, 30, 10), 0, 2, true, 0.010},
		{"p50 misses with three of four", SLA{20 * time.Millisecond, 50}, ms(10, 30, 30, 30), 0, 3, false, 0.030},
		{"no requests", p99, nil, 0, 0, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.sla.check(tt.lat, tt.failed)
			if r.Violations != tt.violations || r.Met != tt.met {
				t.Errorf("violations %d met %t, want %d %t", r.Violations, r.Met, tt.violations, tt.met)
			}
			n := len(tt.lat) + tt.failed
			if n > 0 && math.Abs(r.Compliance-(1-float64(tt.violations)/float64(n))) > 1e-12 {
				t.Errorf("compliance %v", r.Compliance)
			}
			switch {
			case tt.observed < 0 && r.ObservedS != nil:
				t.Errorf("observed %v, want none (a failed request)", *r.ObservedS)
			case tt.observed >= 0 && (r.ObservedS == nil || *r.ObservedS != tt.observed):
				t.Errorf("observed %v, want %v", r.ObservedS, tt.observed)
			}
			if r.ObservedS != nil && (*r.ObservedS <= r.ThresholdS) != r.Met {
				t.Errorf("verdict %t disagrees with observed %v vs threshold %v", r.Met, *r.ObservedS, r.ThresholdS)
			}
		})
	}
}

// scriptedCapacity is a server model whose trials meet the SLA exactly up
// to capacity requests/s.
func scriptedCapacity(capacity float64, calls *[]float64) trialFunc {
	return func(ctx context.Context, qps float64) (report.Trial, error) {
		*calls = append(*calls, qps)
		return report.Trial{TargetQPS: qps, SLA: report.SLAResult{Met: qps <= capacity}}, nil
	}
}

func TestSearchPeakConverges(t *testing.T) {
	tests := []struct {
		name     string
		capacity float64
		start    float64
	}{
		{"start below capacity ramps up", 137.3, 10},
		{"start above capacity ramps down", 13.7, 400},
		{"start right at capacity", 50, 50},
		{"fractional rates", 0.8, 0.1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []float64
			res, err := searchPeak(context.Background(), tt.start, 0, DefaultMaxTrials, scriptedCapacity(tt.capacity, &calls))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Found || res.PeakQPS > tt.capacity || res.PeakQPS < tt.capacity/(1+searchTolerance) {
				t.Errorf("peak %v (found %t), want within 5%% below %v; trials %v", res.PeakQPS, res.Found, tt.capacity, calls)
			}
			if res.UpperQPS <= tt.capacity || res.UpperQPS > res.PeakQPS*(1+searchTolerance) {
				t.Errorf("upper %v: want the lowest failing rate, within 5%% of the peak %v", res.UpperQPS, res.PeakQPS)
			}
			if len(res.Trials) != len(calls) || len(calls) > DefaultMaxTrials {
				t.Errorf("%d trials reported, %d run", len(res.Trials), len(calls))
			}
			if res.Note != "" {
				t.Errorf("note %q on a converged search", res.Note)
			}
		})
	}
}

func TestSearchPeakLimits(t *testing.T) {
	var calls []float64
	res, _ := searchPeak(context.Background(), 10, 0, 3, scriptedCapacity(1000, &calls))
	if len(calls) != 3 || res.PeakQPS != 40 || !strings.Contains(res.Note, "stopped after 3 trials") || !strings.Contains(res.Note, "was not confirmed by a second trial") {
		t.Errorf("capped search: trials %v, peak %v, note %q", calls, res.PeakQPS, res.Note)
	}
	calls = nil
	res, _ = searchPeak(context.Background(), 10, 0, 100, scriptedCapacity(math.Inf(1), &calls))
	if !res.Found || !strings.Contains(res.Note, "every trial") || res.UpperQPS != 0 {
		t.Errorf("unbounded capacity: peak %v, note %q, upper %v", res.PeakQPS, res.Note, res.UpperQPS)
	}
	calls = nil
	res, _ = searchPeak(context.Background(), 10, 0, 100, scriptedCapacity(0, &calls))
	if res.Found || res.PeakQPS != 0 || !strings.Contains(res.Note, "no trial") {
		t.Errorf("SLA never met: found %t, peak %v, note %q", res.Found, res.PeakQPS, res.Note)
	}
	boom := errors.New("boom")
	if _, err := searchPeak(context.Background(), 1, 0, 5, func(context.Context, float64) (report.Trial, error) {
		return report.Trial{}, boom
	}); !errors.Is(err, boom) {
		t.Errorf("trial error lost: %v", err)
	}
	if _, err := searchPeak(context.Background(), 0, 0, 5, scriptedCapacity(1, &calls)); err == nil {
		t.Error("a zero start rate was accepted")
	}
}

// TestSearchPeakOnQueueingModel runs the real search with real open-loop
// trials on a scripted service of 4ms per request (capacity 250/s with one
// worker) in a synctest bubble. The p99 of an M/D/1 queue stays under 20ms
// well below capacity and explodes near it, so the peak lands between.
func TestSearchPeakOnQueueingModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sla := SLA{Threshold: 20 * time.Millisecond, Percentile: 99}
		exec := scripted(func(int) time.Duration { return 4 * time.Millisecond })
		trialNo := 0
		trial := func(ctx context.Context, qps float64) (report.Trial, error) {
			trialNo++
			res, err := runPhase(ctx, trialPhase(sla, qps, 0, uint64(trialNo)), exec)
			if err != nil {
				return report.Trial{}, err
			}
			return trialResult(sla, qps, res), nil
		}
		res, err := searchPeak(context.Background(), 50, 0, DefaultMaxTrials, trial)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found || res.PeakQPS < 100 || res.PeakQPS >= 250 {
			t.Errorf("peak %v requests/s for a 4ms service and a 20ms p99; want between 100 and the 250/s capacity", res.PeakQPS)
		}
		for _, tr := range res.Trials {
			if tr.TargetQPS > 250 && tr.SLA.Met {
				t.Errorf("a trial above capacity (%v/s) met the SLA", tr.TargetQPS)
			}
		}
		t.Logf("peak %.1f requests/s after %d trials", res.PeakQPS, len(res.Trials))
	})
}

// TestTrialSize: a trial holds the requests its percentile needs for an
// early-stopping verdict with one request over the threshold (662 for p99
// at 99%, LoadGen's method), and no fewer at low rates: a 2s trial at 1
// request/s used to hold 2 requests, and one slow request failed it.
func TestTrialSize(t *testing.T) {
	p99 := SLA{Threshold: time.Millisecond, Percentile: 99}
	p95 := SLA{Threshold: time.Millisecond, Percentile: 95}
	for _, tt := range []struct {
		sla  SLA
		qps  float64
		d    time.Duration
		want int
	}{
		{p99, 1, 2 * time.Second, 662},
		{p99, 9, 2 * time.Second, 662},
		{p99, 1000, 2 * time.Second, 2000}, // the trial duration's worth is more
		{p95, 10, 2 * time.Second, 130},
	} {
		if got := trialSize(tt.sla, tt.qps, tt.d); got != tt.want {
			t.Errorf("trialSize(p%v, %v/s, %v) = %d, want %d", tt.sla.Percentile, tt.qps, tt.d, got, tt.want)
		}
	}
	if a := verdictAllowed(p99, 662); a != trialAllowance {
		t.Errorf("662 requests allow %d over the threshold for a p99 verdict, want %d", a, trialAllowance)
	}
	if a := verdictAllowed(p99, 459); a != 0 {
		t.Errorf("459 requests allow %d over, want 0 (LoadGen)", a)
	}
	if a := verdictAllowed(p99, 458); a != -1 {
		t.Errorf("458 requests allow %d over, want none to prove p99", a)
	}
}

// TestSearchPeakStopsAtTheFloor: below the rate whose sized trial would
// outlast maxTrialTime the search stops and says why, instead of running
// a trial of hours.
func TestSearchPeakStopsAtTheFloor(t *testing.T) {
	sla := SLA{Threshold: time.Millisecond, Percentile: 99}
	floor := searchFloor(sla)
	if want := 662.0 / 600; floor != want {
		t.Fatalf("floor %v, want %v (662 requests in 10 minutes)", floor, want)
	}
	var calls []float64
	res, err := searchPeak(context.Background(), 32, floor, DefaultMaxTrials, scriptedCapacity(0, &calls))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range calls {
		if r < floor {
			t.Errorf("tried %v requests/s, below the floor %v", r, floor)
		}
	}
	if res.Found || !strings.Contains(res.Note, "would last longer than 10m0s") || calls[len(calls)-1] != 2 {
		t.Errorf("trials %v, note %q", calls, res.Note)
	}
}

// TestSearchPeakConfirmsThePeak: a rate at full load passes once by luck
// (the queue had no time to build) and fails on every later trial; the
// search must not report it.
func TestSearchPeakConfirmsThePeak(t *testing.T) {
	const capacity = 100.0
	var calls []float64
	lucky := map[float64]bool{}
	trial := func(ctx context.Context, qps float64) (report.Trial, error) {
		calls = append(calls, qps)
		met := qps <= capacity
		if qps > capacity && qps <= 1.1*capacity && !lucky[qps] {
			lucky[qps], met = true, true
		}
		return report.Trial{TargetQPS: qps, SLA: report.SLAResult{Met: met}}, nil
	}
	res, err := searchPeak(context.Background(), 13, 0, 40, trial)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.PeakQPS > capacity || res.PeakQPS < capacity/(1+searchTolerance) {
		t.Errorf("peak %v, want within 5%% below %v; trials %v, note %q", res.PeakQPS, capacity, calls, res.Note)
	}
	if last := res.Trials[len(res.Trials)-1]; last.TargetQPS != res.PeakQPS || !last.Repeat || !last.SLA.Met {
		t.Errorf("the peak %v was not confirmed by a last passing trial: %v", res.PeakQPS, calls)
	}
}

// TestSearchPeakRepeatsBeforeMovingDown: one stray failing trial below
// capacity (noise) must not pull the peak down: the rate is tried again.
func TestSearchPeakRepeatsBeforeMovingDown(t *testing.T) {
	const capacity = 137.3
	var calls []float64
	strayDone := false
	trial := func(ctx context.Context, qps float64) (report.Trial, error) {
		calls = append(calls, qps)
		met := qps <= capacity
		if qps == 80 && !strayDone { // a slow request while at 80/s
			strayDone, met = true, false
		}
		return report.Trial{TargetQPS: qps, SLA: report.SLAResult{Met: met}}, nil
	}
	res, err := searchPeak(context.Background(), 10, 0, DefaultMaxTrials, trial)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found || res.PeakQPS > capacity || res.PeakQPS < capacity/(1+searchTolerance) {
		t.Errorf("peak %v, want within 5%% below %v; trials %v", res.PeakQPS, capacity, calls)
	}
	repeats := 0
	for _, tr := range res.Trials {
		if tr.Repeat {
			repeats++
		}
	}
	if res.Trials[4].TargetQPS != 80 || !res.Trials[4].Repeat || !res.Trials[4].SLA.Met || repeats < 2 {
		t.Errorf("trials %v: want the failing trial at 80/s repeated (and passing), and each failing rate repeated", calls)
	}
}

// TestTrialOutlastsAStall: a trial whose service meets the SLA but stalls
// twice (two requests over the threshold, more than a 662-request trial
// allows) is extended until the early-stopping verdict proves the SLA,
// instead of failing, and so is one with an early burst of violations; a
// hopeless rate is stopped as missed within a few requests.
func TestTrialOutlastsAStall(t *testing.T) {
	sla := SLA{Threshold: 20 * time.Millisecond, Percentile: 99}
	synctest.Test(t, func(t *testing.T) {
		exec := scripted(func(seq int) time.Duration {
			if seq == 100 || seq == 400 {
				return 30 * time.Millisecond
			}
			return time.Millisecond
		})
		// 20 requests/s, 50ms apart on average: a stall may delay the
		// next request or two over the threshold too.
		res, err := runPhase(context.Background(), trialPhase(sla, 20, 0, 1), exec)
		if err != nil {
			t.Fatal(err)
		}
		r := sla.check(res.latencies(), res.errors())
		need := stats.QueriesNeeded(r.Violations, 99, stats.SLAConfidence)
		if res.aborted || r.Verdict != string(stats.Met) || r.Violations < 2 || len(res.records) < need || len(res.records) >= res.planned {
			t.Errorf("aborted %t, verdict %s with %d over after %d of at most %d requests; want met after %d", res.aborted, r.Verdict, r.Violations,
				len(res.records), res.planned, need)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// A burst: three of the first five requests over (one stall puts
		// the requests queued behind it over too). Read as independent
		// requests that is a miss at 0.001%; it must not end the trial.
		exec := scripted(func(seq int) time.Duration {
			if seq >= 2 && seq <= 4 {
				return 30 * time.Millisecond
			}
			return time.Millisecond
		})
		res, err := runPhase(context.Background(), trialPhase(sla, 20, 0, 1), exec)
		if err != nil {
			t.Fatal(err)
		}
		if r := sla.check(res.latencies(), res.errors()); res.aborted || r.Verdict != string(stats.Met) {
			t.Errorf("an early burst of 3: aborted %t, verdict %s after %d requests; want met", res.aborted, r.Verdict, len(res.records))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		res, err := runPhase(context.Background(), trialPhase(sla, 20, 0, 1), scripted(func(int) time.Duration { return 30 * time.Millisecond }))
		if err != nil {
			t.Fatal(err)
		}
		if r := sla.check(res.latencies(), res.errors()); !res.aborted || r.Verdict != string(stats.Missed) || len(res.records) > 5 {
			t.Errorf("every request over: aborted %t, verdict %s after %d requests; want missed within 5", res.aborted, r.Verdict, len(res.records))
		}
	})
}

// TestSearchPeakOutlastsStalls: the queueing model of
// TestSearchPeakOnQueueingModel with a 25ms stall every 600th request
// (a shared machine's noise: each stall puts a request or two over the
// 20ms threshold, whatever the rate). A 662-request trial sees two stalls
// and, stopped at the second, used to fail every rate; the sequential
// trial outlasts them and the search still lands below capacity.
func TestSearchPeakOutlastsStalls(t *testing.T) {
	sla := SLA{Threshold: 20 * time.Millisecond, Percentile: 99}
	service := func(seq int) time.Duration {
		if seq%600 == 0 {
			return 25 * time.Millisecond
		}
		return 4 * time.Millisecond
	}
	synctest.Test(t, func(t *testing.T) {
		// The old fixed-size trial at half capacity: aborted by the stalls.
		n := trialSize(sla, 125, 0)
		res, err := runPhase(context.Background(), phase{scenario: Server, workers: 1, requests: n, qps: 125, seed: 1,
			threshold: sla.Threshold, budget: verdictAllowed(sla, n)}, scripted(service))
		if err != nil {
			t.Fatal(err)
		}
		if !res.aborted {
			t.Fatalf("the fixed-size trial was not stopped by two stalls; the test no longer shows what it claims")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		trialNo := 0
		trial := func(ctx context.Context, qps float64) (report.Trial, error) {
			trialNo++
			res, err := runPhase(ctx, trialPhase(sla, qps, 0, uint64(trialNo)), scripted(service))
			if err != nil {
				return report.Trial{}, err
			}
			return trialResult(sla, qps, res), nil
		}
		res, err := searchPeak(context.Background(), 50, 0, DefaultMaxTrials, trial)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Found || res.PeakQPS < 100 || res.PeakQPS >= 250 {
			t.Errorf("peak %v requests/s (found %t) for a 4ms service with stalls and a 20ms p99; want between 100 and the 250/s capacity", res.PeakQPS, res.Found)
		}
		t.Logf("peak %.1f requests/s after %d trials", res.PeakQPS, len(res.Trials))
	})
}

// TestRunServerSLABelowOneRequest: when a single request takes longer than
// the SLA allows, the search says so instead of only that no rate met it.
func TestRunServerSLABelowOneRequest(t *testing.T) {
	rep, err := Run(context.Background(), Config{
		ModelPath: dynModel(t), Scenario: Server, Runs: 5, Warmup: 3, IntraOpThreads: 1,
		SLA: &SLA{Threshold: time.Nanosecond, Percentile: 99}, MaxTrials: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Load.Search
	if s == nil || s.Found || !strings.Contains(s.Note, "a single request already takes longer than the SLA allows (warm-up median") {
		t.Errorf("search %+v", s)
	}
}
