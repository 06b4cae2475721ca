package instrument

import (
	"context"
	"testing"
	"time"
)

// TestCPUCapHoldsTheShare drives the account with a scripted session:
// unprofiled runs of 100 µs, profiled runs costing 1 ms more, sampling
// every 100th run. Uncapped that is 10% of the run time; capped at 2% the
// interval must lengthen to about 500 runs, and the cost stay within 2%
// of the run time plus one profiled run. A profile cheaper than the budget
// leaves every 100th run profiled.
func TestCPUCapHoldsTheShare(t *testing.T) {
	const plain = 100 * time.Microsecond
	for _, tc := range []struct {
		name      string
		extra     time.Duration
		wantEvery float64 // runs per profiled run, ±3%
	}{
		{"costly profile", time.Millisecond, 500},
		{"cheap profile", 100 * time.Microsecond, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newCPUCap(0.02)
			const runs = 200_000
			profiled := 0
			for i := 1; i <= runs; i++ {
				if k.allow(i%100 == 0) {
					profiled++
					k.profiledRun(plain + tc.extra/2)
					k.charge(tc.extra / 2) // emission, charged later
				} else {
					k.plain(plain)
				}
			}
			runTime := time.Duration(runs) * plain
			bound := time.Duration(0.02*float64(runTime)) + tc.extra
			if spent := time.Duration(k.spent.Load()); spent > bound {
				t.Errorf("profiling cost %v over %v of runs: more than 2%% + one profile (%v)", spent, runTime, bound)
			}
			every := float64(runs) / float64(profiled)
			if every < tc.wantEvery*0.97 || every > tc.wantEvery*1.03 {
				t.Errorf("1 run in %.1f profiled, want about 1 in %.0f", every, tc.wantEvery)
			}
			if got := k.measured(); got > 0.0201 {
				t.Errorf("measured share %.4f, want <= 0.02", got)
			}
		})
	}
}

// TestCPUCapOnARealSession: every run selected, capped at 5%, on ORT. The
// first profiled run costs far more than 5% of the next one, so the cap
// must hold selections back; every run that was profiled still carries its
// operator spans, and each profiled run span says the interval.
func TestCPUCapOnARealSession(t *testing.T) {
	p := newProviders(t)
	s, in, out := chainSession(t, p, 4, 16, WithModelName("chain"),
		WithProfiling(Profiling{EveryN: 1, MaxCPUShare: 0.05}))
	ctx := context.Background()
	const runs = 200
	for range runs {
		if err := s.Run(ctx, in, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st := s.ProfilingStats()
	if st.Throttled == 0 || st.Profiled >= runs || st.Profiled == 0 {
		t.Fatalf("stats %+v: want some runs profiled and some held back", st)
	}
	if st.Selected != st.Profiled || st.Emitted != st.Profiled || st.Missed != 0 {
		t.Errorf("stats %+v: every selected run must be profiled and emitted", st)
	}
	if st.EffectiveEveryN < 1 || st.CPUShare <= 0 {
		t.Errorf("stats %+v: want an effective interval >= 1 and a measured share", st)
	}
	byRun := checkOperators(t, p, "run chain")
	if len(byRun) != int(st.Profiled) {
		t.Errorf("operator spans under %d runs, want %d", len(byRun), st.Profiled)
	}
	marked := 0
	for _, r := range spansNamed(p.spans, "run chain") {
		a := attrs(r.Attributes())
		v, ok := a[attrProfilingInterval]
		if a[attrRunProfiled].AsBool() {
			if !ok || v.AsFloat64() < 1 {
				t.Errorf("profiled run span without a valid %s: %v", attrProfilingInterval, v)
			}
			marked++
		} else if ok {
			t.Errorf("unprofiled run span carries %s", attrProfilingInterval)
		}
	}
	if marked != int(st.Profiled) {
		t.Errorf("%d run spans marked profiled, want %d", marked, st.Profiled)
	}
}
