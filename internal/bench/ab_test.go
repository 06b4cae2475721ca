package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/stats"
)

// synthPairs makes n pairs of blocks of runs runs each with a known
// ratio B/A: every latency of B is truth times a latency of A in
// distribution. A drift factor shared by the two blocks of a pair (what the
// paired design cancels) and a factor of each block's own (what makes the
// block, not the run, the unit) multiply lognormal run latencies.
func synthPairs(rng *rand.Rand, n, runs int, truth float64) []abPair {
	block := func(drift, scale float64) abBlock {
		own := math.Exp(0.05 * rng.NormFloat64())
		b := abBlock{runs: runs}
		for k := 0; k < runs; k++ {
			x := scale * drift * own * 0.010 * math.Exp(0.25*rng.NormFloat64())
			b.lat = append(b.lat, x)
			b.wall += x
		}
		b.cpu = 0.9 * b.wall
		slices.Sort(b.lat)
		return b
	}
	out := make([]abPair, n)
	for i := range out {
		drift := math.Exp(0.2 * rng.NormFloat64())
		out[i] = abPair{a: block(drift, 1), b: block(drift, truth)}
	}
	return out
}

// TestABIntervalCoverage checks the paired block bootstrap's intervals on
// synthetic data with a known ratio over a fixed list of seeds: the share
// of intervals holding the true ratio is close to the nominal 95%.
func TestABIntervalCoverage(t *testing.T) {
	const seeds, truth, conf = 120, 1.1, 0.95
	want := map[string]float64{"p50": truth, "p90": truth, "runs_per_s": 1 / truth, "cpu_s_per_run": truth}
	hits := map[string]int{}
	width := 0.0
	for seed := uint64(1); seed <= seeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		pairs := synthPairs(rng, 20, 10, truth)
		st := abAnalyze(pairs, conf, 0.02, 400, rand.New(rand.NewPCG(seed, 8)))
		for _, s := range st {
			w, ok := want[s.Name]
			if !ok {
				continue
			}
			if !s.Bounded {
				t.Fatalf("seed %d: %s not bounded with %d runs a side", seed, s.Name, 200)
			}
			if *s.Lower <= w && w <= *s.Upper {
				hits[s.Name]++
			}
			if s.Name == "p50" {
				width += *s.Upper - *s.Lower
			}
		}
	}
	for name := range want {
		cov := float64(hits[name]) / seeds
		t.Logf("%s: coverage %.3f (nominal %.2f)", name, cov, conf)
		if cov < 0.88 || cov > 0.995 {
			t.Errorf("%s: %d of %d intervals hold the true ratio (%.3f), want close to %.2f", name, hits[name], seeds, cov, conf)
		}
	}
	t.Logf("p50 mean interval width %.3f", width/seeds)
}

// TestABIntervalNarrowsWithPairs: more pairs, narrower intervals (the
// width shrinks about as one over the square root of the pairs).
func TestABIntervalNarrowsWithPairs(t *testing.T) {
	var prev float64 = math.Inf(1)
	for _, n := range []int{10, 40, 160} {
		var w float64
		for seed := uint64(1); seed <= 10; seed++ {
			st := abAnalyze(synthPairs(rand.New(rand.NewPCG(seed, 1)), n, 10, 1.05), 0.95, 0.02, 300, rand.New(rand.NewPCG(seed, 2)))
			w += *st[0].Upper - *st[0].Lower
		}
		w /= 10
		t.Logf("%d pairs: p50 interval width %.4f", n, w)
		if w >= prev {
			t.Errorf("%d pairs: width %.4f, not narrower than with fewer pairs (%.4f)", n, w, prev)
		}
		prev = w
	}
}

func TestABJudge(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		higher bool
		want   string
	}{
		{1.05, 1.10, false, "slower"},
		{0.85, 0.95, false, "faster"},
		{0.99, 1.01, false, "no_difference"},
		{1.01, 1.05, false, "undecided"}, // significant, not beyond the threshold
		{0.97, 1.03, false, "undecided"},
		{1.05, 1.10, true, "faster"},
		{0.85, 0.95, true, "slower"},
	} {
		if got := abJudge(c.lo, c.hi, 0.02, c.higher); got != c.want {
			t.Errorf("abJudge(%g, %g, higher %v) = %s, want %s", c.lo, c.hi, c.higher, got, c.want)
		}
	}
}

// fakeClock is a clock that only the runners move: a run of d advances
// it by d, give or take up to 10% (seeded), so a test's latencies do not
// depend on the machine's load.
type fakeClock struct {
	t   time.Time
	rng *rand.Rand
}

func newFakeClock(seed uint64) *fakeClock {
	return &fakeClock{t: time.Unix(1e9, 0), rng: rand.New(rand.NewPCG(seed, 9))}
}

func (c *fakeClock) now() time.Time { return c.t }

// runner is a run that takes d on the clock.
func (c *fakeClock) runner(d time.Duration) func(context.Context) error {
	return func(context.Context) error {
		c.t = c.t.Add(time.Duration(float64(d) * (0.9 + 0.2*c.rng.Float64())))
		return nil
	}
}

// TestABLoopPlantedSlowSide: B takes twice as long a run as A (on a fake
// clock the runners advance, ±10% per run); the loop says B is slower
// (sides swapped, faster; identical, no difference within ±5%), with every
// pair's order drawn at random.
func TestABLoopPlantedSlowSide(t *testing.T) {
	for _, c := range []struct {
		a, b time.Duration
		want string
	}{{time.Millisecond, 2 * time.Millisecond, "slower"}, {2 * time.Millisecond, time.Millisecond, "faster"}, {time.Millisecond, time.Millisecond, "no_difference"}} {
		clock := newFakeClock(3)
		plan := abPlan{blockRuns: 5, maxTime: 2 * time.Second, looks: 2, threshold: 0.05, conf: 0.975, resamples: 300, seed: 3, now: clock.now}
		res, err := abLoop(context.Background(), [2]abRunner{perRun(clock.runner(c.a), clock.now), perRun(clock.runner(c.b), clock.now)}, plan)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != c.want {
			t.Fatalf("A %s, B %s: verdict %q, want %q (%+v)", c.a, c.b, res.Verdict, c.want, res.Stats)
		}
		res.Headline = abHeadline(res)
		t.Log(res.Headline)
		firsts := map[string]int{}
		for _, b := range res.Blocks {
			if b.Order == 0 {
				firsts[b.Side]++
			}
		}
		if firsts["A"] == 0 || firsts["B"] == 0 {
			t.Errorf("order never shuffled: first of a pair %v", firsts)
		}
	}
}

// TestABLoopFlagsDisturbedPairs: a judge that calls every third pair's
// blocks disturbed flags those pairs, blocks with their reasons, and the
// headline says so; the pairs stay in the analysis.
func TestABLoopFlagsDisturbedPairs(t *testing.T) {
	n := 0
	clock := newFakeClock(1)
	plan := abPlan{blockRuns: 5, maxTime: 600 * time.Millisecond, looks: 1, threshold: 0.5, conf: 0.95, resamples: 100, seed: 1, now: clock.now,
		judge: func(time.Time, time.Time) (bool, []string) {
			n++
			if (n-1)/2%3 == 0 {
				return true, []string{"planted co-runner"}
			}
			return false, nil
		}}
	res, err := abLoop(context.Background(), [2]abRunner{perRun(clock.runner(time.Millisecond), clock.now), perRun(clock.runner(time.Millisecond), clock.now)}, plan)
	if err != nil {
		t.Fatal(err)
	}
	total := len(res.Blocks) / 2
	if res.Pairs != total {
		t.Fatalf("%d pairs analysed of %d measured: disturbed pairs must stay in", res.Pairs, total)
	}
	if want := (total + 2) / 3; res.PairsDisturbed != want {
		t.Errorf("%d pairs flagged, want %d (every third)", res.PairsDisturbed, want)
	}
	if b := res.Blocks[0]; !b.Disturbed || len(b.Reasons) != 1 {
		t.Errorf("first block %+v, want disturbed with its reason", b)
	}
	if h := abHeadline(res); !strings.Contains(h, "disturbed in") {
		t.Errorf("headline %q does not flag the disturbance", h)
	}
}

func TestABValidate(t *testing.T) {
	ok := Config{ModelPath: "m.onnx"}
	for _, c := range []struct {
		ab   AB
		want string
	}{
		{AB{A: ok, B: Config{}}, "side B names no model"},
		{AB{A: ok, B: Config{ModelPath: "m.onnx", Generate: 4}}, "generation"},
		{AB{A: Config{ModelPath: "m.onnx", Scenario: Server}, B: ok}, "server scenario"},
		{AB{A: ok, B: ok, Threshold: 1.5}, "AB.Threshold"},
		{AB{A: ok, B: ok, Looks: 50}, "AB.Looks"},
	} {
		err := c.ab.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: %v, want an error with %q", err, c.want)
		}
	}
	if err := (AB{A: ok, B: ok}).Validate(); err != nil {
		t.Errorf("Validate of a plain A/B: %v", err)
	}
}

// TestSelectQuantile: the selected quantile is the sorted one.
func TestSelectQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 3, 10, 101, 1000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(50)) // ties too
		}
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		for _, q := range []float64{0, 0.1, 0.5, 0.9, 0.99, 1} {
			if got, want := selectQuantile(slices.Clone(xs), q), stats.QuantileSorted(sorted, q); got != want {
				t.Errorf("n %d q %g: %g, want %g", n, q, got, want)
			}
		}
	}
}

// TestABLoopResizesBlocks: blocks sized for 1 ms runs that take 10 ms (a
// machine busier than during the warm-up) are sized again after the first
// pair, to about DefaultABBlockTime.
func TestABLoopResizesBlocks(t *testing.T) {
	clock := newFakeClock(5)
	plan := abPlan{blockRuns: 200, maxTime: 20 * time.Second, looks: 1, threshold: 0.05, conf: 0.95, resamples: 50, seed: 1, now: clock.now, recalibrate: true}
	res, err := abLoop(context.Background(), [2]abRunner{perRun(clock.runner(10*time.Millisecond), clock.now), perRun(clock.runner(10*time.Millisecond), clock.now)}, plan)
	if err != nil {
		t.Fatal(err)
	}
	if res.BlockRuns < 20 || res.BlockRuns > 30 || res.Blocks[0].Runs != 200 || res.Blocks[2].Runs != res.BlockRuns {
		t.Errorf("block runs %d (first block %d, third %d), want about 25 after the first pair", res.BlockRuns, res.Blocks[0].Runs, res.Blocks[2].Runs)
	}
}
