package history

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// machineNoise reads testdata/vad-p50-noise.txt: the p50 of repeated
// benches of one configuration on this machine.
func machineNoise(t *testing.T) []float64 {
	t.Helper()
	f, err := os.Open("testdata/vad-p50-noise.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// logSD is the standard deviation of log(xs): the relative noise.
func logSD(xs []float64) float64 {
	var s, ss float64
	for _, v := range xs {
		s += math.Log(v)
	}
	m := s / float64(len(xs))
	for _, v := range xs {
		ss += (math.Log(v) - m) * (math.Log(v) - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// TestFalsePositiveRate runs the detection over series with no change in
// them, at this machine's noise: the real p50s of repeated benches, in
// random orders (shuffled, and resampled with replacement), and log-normal
// series at the same relative noise. At most 5% of the series may show a
// change point (the figure is logged; go test -v -run FalsePositive).
func TestFalsePositiveRate(t *testing.T) {
	real := machineNoise(t)
	sd := logSD(real)
	t.Logf("machine noise: %d benches, p50 relative SD %.1f%%", len(real), 100*sd)
	const series, length = 200, 30
	rng := rand.New(rand.NewPCG(7, 11))
	kinds := []struct {
		name string
		gen  func() []float64
	}{
		{"real p50s shuffled", func() []float64 {
			xs := append([]float64(nil), real...)
			rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
			return xs[:min(length, len(xs))]
		}},
		{"real p50s resampled", func() []float64 {
			xs := make([]float64, length)
			for i := range xs {
				xs[i] = real[rng.IntN(len(real))]
			}
			return xs
		}},
		{"log-normal at the machine's noise", func() []float64 { return noisy(rng, length, 3e-4, sd) }},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			hit := 0
			for range series {
				cps, err := Detect(k.gen(), Detection{})
				if err != nil {
					t.Fatal(err)
				}
				if len(cps) > 0 {
					hit++
				}
			}
			rate := float64(hit) / series
			t.Logf("%s: %d of %d series of %d runs had a change point (false-positive rate %.1f%%)", k.name, hit, series, length, 100*rate)
			if rate > 0.05 {
				t.Errorf("false-positive rate %.1f%% over %d noise-only series, want at most 5%%", 100*rate, series)
			}
		})
	}
}

// TestDetectionDelay measures how many runs after a step the gate needs to
// call it a regression, at this machine's noise: 20 runs at one level,
// then runs at the new level until Check says regression (at most 20),
// with the change placed at the right run or one off.
// Logged per step size; a 50% step must be caught within 6 runs in 9 of
// 10 trials.
func TestDetectionDelay(t *testing.T) {
	sd := logSD(machineNoise(t))
	rng := rand.New(rand.NewPCG(3, 5))
	for _, step := range []float64{0.10, 0.20, 0.50} {
		var delays []int
		missed := 0
		for range 100 {
			values := noisy(rng, 20, 3e-4, sd)
			delay := -1
			for n := 1; n <= 20; n++ {
				values = append(values, 3e-4*(1+step)*math.Exp(sd*rng.NormFloat64()))
				runs := make([]Run, len(values))
				for i, v := range values {
					runs[i] = Run{ID: int64(i + 1), Model: "m", Metrics: map[string]Value{"p50": {V: v}}}
				}
				cfg := Config{Recent: 20}
				series, err := AnalyzeRuns(runs, cfg)
				if err != nil {
					t.Fatal(err)
				}
				if v := Check(series, cfg); v[0].Status == StatusRegression && v[0].Change.Index >= 19 && v[0].Change.Index <= 21 {
					delay = n
					break
				}
			}
			if delay < 0 {
				missed++
				delay = 99
			}
			delays = append(delays, delay)
		}
		sort.Ints(delays)
		t.Logf("step +%.0f%% at noise %.1f%%: runs after the change until the gate fails: median %d, 90th percentile %d, not caught within 20 runs: %d of 100",
			100*step, 100*sd, delays[49], delays[89], missed)
		if step == 0.50 && delays[89] > 6 {
			t.Errorf("a 50%% step took %d runs (90th percentile) to be caught, want at most 6", delays[89])
		}
	}
}
