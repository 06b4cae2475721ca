package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSequentialSLAIsCalibrated: LoadGen's one-look rule, applied after
// every request up to 4 violations, calls a p99 server whose true share
// over the threshold is exactly 1% "met" 2.7% of the time; the calibrated
// test keeps that within 1%, with looks later than LoadGen's 459 and 662.
func TestSequentialSLAIsCalibrated(t *testing.T) {
	oneLook := make([]int, 5)
	for v := range oneLook {
		oneLook[v] = QueriesNeeded(v, 99, SLAConfidence)
	}
	if got := falseMet(oneLook, 0.01); got < 0.025 || got > 0.03 {
		t.Errorf("one-look rule at every request: false met %.4f, want about 0.027", got)
	}
	s, err := NewSequentialSLA(99, SLAConfidence, 4)
	if err != nil {
		t.Fatal(err)
	}
	if s.FalseMet > 0.01 || s.FalseMet < 0.0095 {
		t.Errorf("calibrated false met %.5f, want at most (and close to) 0.01", s.FalseMet)
	}
	if !slices.IsSorted(s.Looks) || s.Looks[0] <= 459 || s.Looks[1] <= 662 || s.Looks[0] > 600 {
		t.Errorf("looks %v: want increasing, each later than LoadGen's (459, 662), the first under 600", s.Looks)
	}
	t.Logf("p99: per look %.5f, looks %v, false met %.5f; false missed within %d requests %.5f", s.PerLook, s.Looks, s.FalseMet, MissCheckHorizon, s.FalseMissed)
	if s.FalseMissed > 0.01 || s.FalseMissed <= 0 {
		t.Errorf("false missed %.5f within %d requests, want at most 0.01", s.FalseMissed, MissCheckHorizon)
	}
	// LoadGen's one-look "missed" (P(Binomial(n, 1-P) >= v) <= 1%) at
	// every request past 4 violations errs more than 1% of the time.
	if got := falseMissedOneLook(s, MissCheckHorizon, 0.01); got <= 0.01 {
		t.Errorf("one-look missed at every request: false missed %.4f, want more than 1%% (else the mixture is not needed)", got)
	}
	// A queue built up: 5 over among the first 300 requests is not a miss
	// (4 or fewer never are); 30 over among 330 is.
	if s.Missed(300, 5) || s.Missed(10, 4) || !s.Missed(330, 30) || s.Missed(330, 6) {
		t.Errorf("Missed: (300,5) %t (10,4) %t (330,30) %t (330,6) %t; want false false true false", s.Missed(300, 5), s.Missed(10, 4), s.Missed(330, 30), s.Missed(330, 6))
	}
	if !s.Met(s.Looks[0], 0) || s.Met(s.Looks[0]-1, 0) || s.Met(s.Looks[0], 1) || s.Met(1e9, 5) {
		t.Errorf("Met disagrees with the looks %v", s.Looks)
	}
	if s.MostViolations(s.Looks[2]) != 2 || s.MostViolations(s.Looks[0]-1) != -1 || s.MostViolations(1e9) != 4 {
		t.Errorf("MostViolations disagrees with the looks %v", s.Looks)
	}
}

// TestFalseMetMatchesSimulation: the exact path computation agrees with a
// simulation of the test on independent requests (p90, where paths are
// short).
func TestFalseMetMatchesSimulation(t *testing.T) {
	s, err := NewSequentialSLA(90, SLAConfidence, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tail := range []float64{0.1, 0.06, 0.14} {
		rng := rand.New(rand.NewPCG(1, 2))
		const sims = 5000
		met := 0
		for range sims {
			v := 0
			for n := 1; v <= s.MaxViolations; n++ {
				if rng.Float64() < tail {
					v++
				}
				if s.Met(n, v) {
					met++
					break
				}
			}
		}
		exact, sim := falseMet(s.Looks, tail), float64(met)/sims
		if sd := math.Sqrt(exact * (1 - exact) / sims); math.Abs(sim-exact) > 5*sd+1e-4 {
			t.Errorf("share over %.2f: exact %.4f, simulated %.4f (sd %.4f)", tail, exact, sim, sd)
		}
		// The same paths, run to 400 requests, for "missed" (stopped
		// when met first).
		const horizon = 400
		missed := 0
		for range sims {
			v := 0
			for n := 1; n <= horizon; n++ {
				if rng.Float64() < tail {
					v++
				}
				if s.Met(n, v) {
					break
				}
				if s.Missed(n, v) {
					missed++
					break
				}
			}
		}
		exactMiss, simMiss := falseMissed(s, horizon, tail), float64(missed)/sims
		if sd := math.Sqrt(exactMiss * (1 - exactMiss) / sims); math.Abs(simMiss-exactMiss) > 5*sd+1e-4 {
			t.Errorf("share over %.2f: false missed exact %.4f, simulated %.4f (sd %.4f)", tail, exactMiss, simMiss, sd)
		}
	}
}

func TestNewSequentialSLARejects(t *testing.T) {
	for _, c := range []struct {
		p, conf float64
		v       int
	}{{100, 0.99, 4}, {99, 1, 4}, {99, 0.99, -1}, {0, 0.99, 1}} {
		if _, err := NewSequentialSLA(c.p, c.conf, c.v); err == nil {
			t.Errorf("NewSequentialSLA(%v, %v, %v) accepted", c.p, c.conf, c.v)
		}
	}
}

// falseMissedOneLook is falseMissed with LoadGen's one-look rule for
// "missed" applied at every request past MaxViolations.
func falseMissedOneLook(s SequentialSLA, horizon int, share float64) float64 {
	tail := (100 - s.Percentile) / 100
	return falseMissedBy(s, horizon, share, func(n, v int) bool {
		return v > s.MaxViolations && 1-BinomialCDF(v-1, n, tail) <= 1-s.Confidence
	})
}

// TestProvableShare: the p99 trial's test proves the SLA met almost never
// where exactly 1% of requests are over (the rate at the peak), and four
// times in five at about a quarter of that share.
func TestProvableShare(t *testing.T) {
	s, err := NewSequentialSLA(99, SLAConfidence, 4)
	if err != nil {
		t.Fatal(err)
	}
	if p := s.MetProbability(0.01); p > 0.01 {
		t.Errorf("met %.4f of the time at a 1%% share, want at most 1%%", p)
	}
	share := s.ProvableShare(0.8)
	if share < 0.0015 || share > 0.0035 || math.Abs(s.MetProbability(share)-0.8) > 0.005 {
		t.Errorf("share proven 80%% of the time %.5f (met %.4f), want about a quarter of 1%%", share, s.MetProbability(share))
	}
	if s.ProvableShare(0) != 0 || s.ProvableShare(1) != 0 {
		t.Error("ProvableShare accepted a probability of 0 or 1")
	}
	t.Logf("p99: proven 80%% of the time at a share of %.4f%%", 100*share)
}
