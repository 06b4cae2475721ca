package interference

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestDrift: a latency rising 20% over the phase is drift; flat noise,
// and a flat series with rare large outliers, are not.
func TestDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noisy := func(n int, f func(i int) float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = f(i) * (1 + 0.05*rng.NormFloat64())
		}
		return xs
	}
	tests := []struct {
		name  string
		xs    []float64
		drift bool
	}{
		{"rising 20%", noisy(400, func(i int) float64 { return 0.010 * (1 + 0.2*float64(i)/400) }), true},
		{"falling 20%", noisy(400, func(i int) float64 { return 0.010 * (1.2 - 0.2*float64(i)/400) }), true},
		{"flat", noisy(400, func(int) float64 { return 0.010 }), false},
		{"flat with outliers", noisy(400, func(i int) float64 {
			if i%37 == 0 {
				return 0.1
			}
			return 0.010
		}), false},
		{"too few runs", noisy(30, func(i int) float64 { return 0.010 * (1 + float64(i)) }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := CheckDrift(tt.xs)
			if d.Drift != tt.drift {
				t.Errorf("drift %v (change %.3f, p %.3g over %d blocks), want %v", d.Drift, d.Change, d.P, d.Blocks, tt.drift)
			}
			v := WithDrift(Verdict{State: report.MeasurementStable}, tt.xs)
			if got := v.State == report.MeasurementDisturbed; got != tt.drift {
				t.Errorf("WithDrift state %q", v.State)
			}
			if tt.drift && !strings.Contains(v.Line(), "drift") {
				t.Errorf("line %q does not say drift", v.Line())
			}
		})
	}
}
