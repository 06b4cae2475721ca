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
	t.Logf("p99: per look %.5f, looks %v, false met %.5f", s.PerLook, s.Looks, s.FalseMet)
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
	for _, tail := range []float64{0.1, 0.06} {
		rng := rand.New(rand.NewPCG(1, 2))
		const sims = 40000
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
