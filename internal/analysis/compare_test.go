package analysis

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// realSamples are 400 latencies of a real ONNX Runtime run (see the file's
// "source").
func realSamples(t testing.TB) []float64 {
	t.Helper()
	b, err := os.ReadFile("testdata/chain_latency.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Source  string    `json:"source"`
		Samples []float64 `json:"samples_s"`
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Samples) < 300 {
		t.Fatalf("fixture: %v, %d samples", err, len(f.Samples))
	}
	return f.Samples
}

// resample draws n samples from xs with replacement, seeded.
func resample(xs []float64, n int, seed uint64, scale float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]float64, n)
	for i := range out {
		out[i] = xs[r.IntN(len(xs))] * scale
	}
	return out
}

func runWith(samples []float64) *report.Report {
	return &report.Report{
		Model:      report.Model{Name: "chain", SHA256: "abc"},
		Latency:    report.Latency{Summary: stats.Summarize(samples), Samples: samples},
		Throughput: report.Throughput{ItemsPerS: float64(len(samples)) / stats.Summarize(samples).Sum},
	}
}

// TestCompareSameBuild: runs drawn from the same real latency distribution
// are never called different, whichever seeds draw them.
func TestCompareSameBuild(t *testing.T) {
	xs := realSamples(t)
	for seed := uint64(1); seed <= 6; seed++ {
		a := runWith(resample(xs, 300, 2*seed, 1))
		b := runWith(resample(xs, 300, 2*seed+1, 1))
		c, err := Compare(a, b, "a.json", "b.json", CompareConfig{Threshold: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		if c.Verdict != VerdictNoChange || c.Regression.Exceeded {
			t.Errorf("seed %d: same build called %s; gate %s", seed, c.Verdict, c.Regression.Reason)
		}
		// Neither would a verdict on p90 or the mean.
		for _, d := range c.Latency {
			if (d.Stat == "p90" || d.Stat == "mean") && d.Significant && d.Change >= c.MinEffect {
				t.Errorf("seed %d, %s: same build slower by %+.1f%% (CI %+.1f%%..%+.1f%%)", seed, d.Stat, 100*d.Change, 100*d.CILow, 100*d.CIHigh)
			}
		}
	}
}

// TestComparePlantedRegression: the same draws with a 10% slowdown planted
// in B are called slower, and the 5% gate fails; a 10% speed-up is called
// faster and passes the gate.
func TestComparePlantedRegression(t *testing.T) {
	xs := realSamples(t)
	for seed := uint64(1); seed <= 4; seed++ {
		a := runWith(resample(xs, 300, 2*seed, 1))
		slow := runWith(resample(xs, 300, 2*seed+1, 1.10))
		c, err := Compare(a, slow, "a.json", "b.json", CompareConfig{Threshold: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		g := c.Latency[statIndex("p50")]
		if c.Verdict != VerdictSlower || !c.Regression.Exceeded {
			t.Errorf("seed %d: planted +10%% called %s (change %+.1f%%, CI %+.1f%%..%+.1f%%), gate %+v", seed, c.Verdict, 100*g.Change, 100*g.CILow, 100*g.CIHigh, c.Regression)
		}
		if g.CILow > 0.10 || g.CIHigh < 0.10 {
			t.Errorf("seed %d: the interval %+.1f%%..%+.1f%% misses the planted +10%%", seed, 100*g.CILow, 100*g.CIHigh)
		}
		// A 20% gate lets the 10% slowdown through, but still calls it slower.
		c, _ = Compare(a, slow, "a.json", "b.json", CompareConfig{Threshold: 0.20})
		if c.Verdict != VerdictSlower || c.Regression.Exceeded {
			t.Errorf("seed %d: 20%% gate: %s, %+v", seed, c.Verdict, c.Regression)
		}
		fast := runWith(resample(xs, 300, 2*seed+1, 0.90))
		c, _ = Compare(a, fast, "a.json", "b.json", CompareConfig{Threshold: 0.05})
		if c.Verdict != VerdictFaster || c.Regression.Exceeded {
			t.Errorf("seed %d: planted -10%%: %s, %+v", seed, c.Verdict, c.Regression)
		}
	}
}

func statIndex(name string) int {
	for i, s := range compareStats {
		if s.Name == name {
			return i
		}
	}
	return -1
}

func TestCompareDeterministic(t *testing.T) {
	xs := realSamples(t)
	a, b := runWith(resample(xs, 200, 1, 1)), runWith(resample(xs, 200, 2, 1.03))
	c1, _ := Compare(a, b, "a", "b", CompareConfig{})
	c2, _ := Compare(a, b, "a", "b", CompareConfig{})
	j1, _ := json.Marshal(c1)
	j2, _ := json.Marshal(c2)
	if !bytes.Equal(j1, j2) {
		t.Error("the same runs and seed gave different comparisons")
	}
	c3, _ := Compare(a, b, "a", "b", CompareConfig{Seed: 99})
	if c3.Latency[1].CILow == c1.Latency[1].CILow {
		t.Error("another seed gave the same interval")
	}
}

func TestCompareDeltas(t *testing.T) {
	xs := realSamples(t)
	a, b := runWith(resample(xs, 100, 1, 1)), runWith(resample(xs, 100, 2, 1))
	a.Operators = &report.Operators{ProfiledRuns: 2, ByType: []report.OpType{
		{OpType: "Conv", Provider: cpuEP, TotalS: 0.02}, {OpType: "Add", Provider: cpuEP, TotalS: 0.002}}}
	b.Operators = &report.Operators{ProfiledRuns: 4, ByType: []report.OpType{
		{OpType: "Conv", Provider: cpuEP, TotalS: 0.032}, {OpType: "Gelu", Provider: cpuEP, TotalS: 0.004}}}
	a.Analysis = &report.Analysis{Energy: report.Energy{Available: true, JoulesPerInference: 0.5}}
	b.Analysis = &report.Analysis{Energy: report.Energy{Available: true, JoulesPerInference: 0.4}}
	b.Config.Batch = 4
	// A predates recorded session options (ONNX Runtime's defaults).
	b.Config.Session = &report.SessionOptions{OptLevel: "extended", ExecutionMode: "sequential", Config: map[string]string{"session.intra_op.allow_spinning": "0"}}
	c, err := Compare(a, b, "a", "b", CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Conv: 10 ms per run in A, 8 ms in B; Add gone; Gelu new.
	if len(c.OpTypes) != 3 || c.OpTypes[0].OpType != "Conv" || !near(c.OpTypes[0].DeltaS, -0.002) || !near(*c.OpTypes[0].Change, -0.2) {
		t.Errorf("op types: %+v", c.OpTypes)
	}
	for _, d := range c.OpTypes[1:] {
		if d.Change != nil {
			t.Errorf("%s ran in one side only but has a change", d.OpType)
		}
	}
	if c.Energy == nil || !near(c.Energy.Change, -0.2) {
		t.Errorf("energy: %+v", c.Energy)
	}
	for _, want := range []string{`batch differs: "0" vs "4"`, `graph optimization level differs: "all" vs "extended"`,
		`session config entries differs: "" vs "session.intra_op.allow_spinning=0"`} {
		if !strings.Contains(strings.Join(c.Warnings, "\n"), want) {
			t.Errorf("warnings %v lack %s", c.Warnings, want)
		}
	}
	if strings.Contains(strings.Join(c.Warnings, "\n"), "execution mode") {
		t.Errorf("warnings %v: the execution modes are the same", c.Warnings)
	}
	var text, md bytes.Buffer
	if err := WriteComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteComparisonMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p50", "CI", "Conv", "Verdict", "Energy"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| p99 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

func TestCompareErrors(t *testing.T) {
	good := runWith([]float64{1, 2, 3, 4, 5, 6})
	tests := []struct {
		name string
		a, b *report.Report
		cfg  CompareConfig
		want string
	}{
		{"few samples", good, runWith([]float64{1, 2}), CompareConfig{}, `"b.json" has 2 latency samples`},
		{"bad sample", good, runWith([]float64{1, 2, 3, 4, math.NaN()}), CompareConfig{}, "not a positive duration"},
		{"bad percentile", good, good, CompareConfig{Percentile: "p42"}, "p42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(tt.a, tt.b, "a.json", "b.json", tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestParseThresholdAndPercentile(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "5": 0.05, "0.05": 0.05, " 12.5% ": 0.125, "1": 0.01} {
		if got, err := ParseThreshold(in); err != nil || !near(got, want) {
			t.Errorf("ParseThreshold(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "-5%", "0"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("ParseThreshold(%q) succeeded", bad)
		}
	}
	for in, want := range map[string]string{"p99": "p99", "P50": "p50", "99.9": "p99.9", "mean": "mean"} {
		if got, err := ParsePercentile(in); err != nil || got != want {
			t.Errorf("ParsePercentile(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParsePercentile("p42"); err == nil {
		t.Error("p42 accepted")
	}
}

func TestBootstrapMatchesStats(t *testing.T) {
	xs := realSamples(t)
	b := NewBootstrap(xs, 1)
	s := stats.Summarize(xs)
	if !near(b.Value(Stat{"p50", 0.5}), s.P50) || !near(b.Value(Stat{"p99", 0.99}), s.P99) || !near(b.Value(Mean), s.Mean) {
		t.Error("bootstrap point values differ from package stats")
	}
	// A resample's quantile equals stats.Quantile of the same multiset.
	out := make([]float64, 2)
	b.Resample([]Stat{{"p90", 0.9}, Mean}, out)
	var ms []float64
	for i, c := range b.counts {
		for range c {
			ms = append(ms, b.sorted[i])
		}
	}
	if !near(out[0], stats.Quantile(ms, 0.9)) || !near(out[1], stats.Summarize(ms).Mean) {
		t.Errorf("resample stats %v, want %v %v", out, stats.Quantile(ms, 0.9), stats.Summarize(ms).Mean)
	}
}

func BenchmarkCompare(b *testing.B) {
	xs := realSamples(b)
	a, c := runWith(resample(xs, 1000, 1, 1)), runWith(resample(xs, 1000, 2, 1.1))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compare(a, c, "a", "b", CompareConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCompareMarksInsufficientRuns: a planted +30% on every sample is
// significant at p50 from 100 runs, but 100 runs cannot bound p99 at 95%
// (368 needed): the p99 row says so and the p99 gate does not fire.
func TestCompareMarksInsufficientRuns(t *testing.T) {
	xs := realSamples(t)
	a := runWith(resample(xs, 100, 11, 1))
	b := runWith(resample(xs, 100, 12, 1.30))
	c, err := Compare(a, b, "a.json", "b.json", CompareConfig{Percentile: "p99", Threshold: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	p50, p99 := c.Latency[statIndex("p50")], c.Latency[statIndex("p99")]
	if p50.InsufficientRuns || !p50.Significant {
		t.Errorf("p50 from 100 runs: %+v", p50)
	}
	if !p99.InsufficientRuns || p99.Significant || c.Verdict != VerdictNoChange || c.Regression.Exceeded {
		t.Errorf("p99 from 100 runs: %+v, verdict %s, gate %+v", p99, c.Verdict, c.Regression)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "insufficient runs: 100 samples cannot bound p99 at 95% confidence (it needs 368 per run)") {
		t.Errorf("warnings %v", c.Warnings)
	}
	var text bytes.Buffer
	if err := WriteComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "insufficient runs") {
		t.Errorf("text:\n%s", text.String())
	}
	// With 400 runs per side p99 is supported and the slowdown is found.
	a, b = runWith(resample(xs, 400, 11, 1)), runWith(resample(xs, 400, 12, 1.30))
	if c, _ = Compare(a, b, "a.json", "b.json", CompareConfig{Percentile: "p99"}); c.Latency[statIndex("p99")].InsufficientRuns {
		t.Errorf("p99 from 400 runs marked insufficient")
	}
}

// TestHeadlineLeadsWithTheWorstSignificantChange: compare's verdict line
// names the significantly slower statistics and the worst of them when
// the verdict's percentile is not the worst ("not significantly different
// (p50)" while p90-p99 were 58-71% slower misled); otherwise it is the
// verdict on the percentile as before.
func TestHeadlineLeadsWithTheWorstSignificantChange(t *testing.T) {
	row := func(stat string, change float64, sig bool) LatencyDelta {
		return LatencyDelta{Stat: stat, Change: change, Significant: sig}
	}
	for _, tc := range []struct {
		name    string
		verdict string
		rows    []LatencyDelta
		want    string
	}{
		{"tail slower, p50 not", VerdictNoChange, []LatencyDelta{row("p50", 0.01, false), row("p90", 0.58, true), row("p95", 0.64, true), row("p99", 0.71, true)},
			"B is slower at p90, p95, p99 (worst p99 +71.0%); p50, the verdict's percentile: not significantly different"},
		{"p50 slower, p99 worse", VerdictSlower, []LatencyDelta{row("p50", 0.05, true), row("p99", 0.30, true)},
			"B is slower at p50, p99 (worst p99 +30.0%)"},
		{"p50 faster, p99 slower", VerdictFaster, []LatencyDelta{row("p50", -0.10, true), row("p99", 0.20, true)},
			"B is slower at p99 (worst p99 +20.0%); p50, the verdict's percentile: faster"},
		{"p50 the worst", VerdictSlower, []LatencyDelta{row("p50", 0.30, true), row("p99", 0.10, true)}, "B is slower (p50)"},
		{"nothing significant", VerdictNoChange, []LatencyDelta{row("p50", 0.01, false), row("p99", 0.40, false)}, "B is not significantly different (p50)"},
		{"only faster", VerdictFaster, []LatencyDelta{row("p50", -0.2, true), row("p99", -0.3, true)}, "B is faster (p50)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Comparison{Percentile: "p50", Verdict: tc.verdict, Latency: tc.rows}
			if got := Headline(c); got != tc.want {
				t.Errorf("Headline = %q, want %q", got, tc.want)
			}
			var b bytes.Buffer
			if err := WriteComparisonText(&b, c); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "Verdict: "+tc.want+"\n") {
				t.Errorf("text report lacks the headline:\n%s", b.String())
			}
		})
	}
}
