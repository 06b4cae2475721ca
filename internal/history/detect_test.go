package history

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Reference values from R: 2*pt(-t, df) and qt(q, df).
func TestStudentT(t *testing.T) {
	for _, c := range []struct{ t, df, p float64 }{
		{2.0, 5, 0.1019395},
		{2.228139, 10, 0.05},
		{3.0, 30, 0.005392},
		{0, 7, 1},
		{10, 2, 0.009852},
	} {
		if got := tTwoSided(c.t, c.df); math.Abs(got-c.p) > 1e-5 {
			t.Errorf("tTwoSided(%g, %g) = %.7f, want %.7f", c.t, c.df, got, c.p)
		}
	}
	for _, c := range []struct{ q, df, want float64 }{
		{0.975, 10, 2.228139},
		{0.975, 1, 12.706205},
		{0.995, 30, 2.749996},
		{0.025, 4, -2.776445},
	} {
		if got := tQuantile(c.q, c.df); math.Abs(got-c.want) > 1e-5 {
			t.Errorf("tQuantile(%g, %g) = %.6f, want %.6f", c.q, c.df, got, c.want)
		}
	}
}

// noisy returns n log-normal points around level with relative noise sd.
func noisy(rng *rand.Rand, n int, level, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * math.Exp(sd*rng.NormFloat64())
	}
	return out
}

func TestDetect(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cat := func(parts ...[]float64) []float64 {
		var out []float64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name   string
		values []float64
		want   []int // indexes of the change points
		change []float64
	}{
		{"constant", noisy(rng, 40, 1e-3, 0.05), nil, nil},
		{"one step up 50%", cat(noisy(rng, 12, 1e-3, 0.05), noisy(rng, 12, 1.5e-3, 0.05)), []int{12}, []float64{0.5}},
		{"step down then up", cat(noisy(rng, 15, 2e-3, 0.03), noisy(rng, 15, 1e-3, 0.03), noisy(rng, 15, 2e-3, 0.03)), []int{15, 30}, []float64{-0.5, 1}},
		{"too short", []float64{1, 2}, nil, nil},
		{"exact levels", []float64{1, 1, 1, 1, 2, 2, 2, 2}, []int{4}, []float64{1}},
		{"step below the smallest change", cat(noisy(rng, 30, 1e-3, 0.002), noisy(rng, 30, 1.02e-3, 0.002)), nil, nil},
		{"long series, change late", cat(noisy(rng, 120, 1e-3, 0.05), noisy(rng, 8, 1.4e-3, 0.05)), []int{120}, []float64{0.4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cps, err := Detect(c.values, Detection{})
			if err != nil {
				t.Fatal(err)
			}
			if len(cps) != len(c.want) {
				t.Fatalf("found %d change points %+v, want %d at %v", len(cps), cps, len(c.want), c.want)
			}
			for i, cp := range cps {
				if cp.Index != c.want[i] {
					t.Errorf("change point %d at %d, want %d", i, cp.Index, c.want[i])
				}
				if !(cp.Lower <= c.change[i]*1.02+0.02 && c.change[i]*0.98-0.02 <= cp.Upper) {
					t.Errorf("change point %d: interval [%.3f, %.3f] misses the true change %.3f", i, cp.Lower, cp.Upper, c.change[i])
				}
				if !(cp.Lower <= cp.Change && cp.Change <= cp.Upper) || cp.PValue > DefaultPValue {
					t.Errorf("change point %d: change %.3f outside [%.3f, %.3f] or p %g", i, cp.Change, cp.Lower, cp.Upper, cp.PValue)
				}
			}
		})
	}
}

func TestDetectRejects(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []float64
		d      Detection
	}{
		{"zero value", []float64{1, 0, 1}, Detection{}},
		{"NaN", []float64{1, math.NaN(), 1}, Detection{}},
		{"p-value 1", []float64{1, 2}, Detection{PValue: 1}},
		{"window too small", []float64{1, 2}, Detection{Window: 4, MinRuns: 3}},
		{"negative change", []float64{1, 2}, Detection{MinChange: -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Detect(c.values, c.d); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
