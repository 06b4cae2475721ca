package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func f64(v float64) *float64 { return &v }

// loadReport has every section of load.go filled.
func loadReport() *Report {
	return &Report{
		SchemaVersion: SchemaVersion,
		Model:         Model{Name: "det"},
		Warmup: &Warmup{
			ModelLoadS: 0.117, InitializationS: 1.11, Mode: "auto", Runs: 23, MaxRuns: 200,
			CurveS: []float64{0.150, 0.030, 0.025, 0.021, 0.020, 0.020, 0.0201, 0.0199, 0.020, 0.020, 0.020, 0.020, 0.020, 0.020},
			Method: "rolling-median stability", Window: 10, Tolerance: 0.05,
			Steady: true, SteadyAfterRuns: 3, DetectedAfterRuns: 23, SteadyS: 0.205, SteadyMedianS: 0.020,
		},
		Load: &Load{
			Scenario: "server", Concurrency: 1, Sessions: "shared", LatencyFrom: "scheduled_arrival",
			TargetQPS: 24.5, AchievedQPS: 24.1, ItemsPerS: 24.1, Requests: 100, Completed: 99, Errors: 1, WallS: 4.1,
			QueueWait:     &stats.Summary{P50: 0.002, P99: 0.030, Max: 0.041},
			MaxQueueDepth: 3,
			SLA: &SLAResult{ThresholdS: 0.05, Percentile: 99, ObservedS: f64(0.046), Requests: 100, Violations: 1, Compliance: 0.99, Met: true,
				Verdict: "insufficient requests", Confidence: 0.99},
			Search: &SLASearch{
				Method: "budgeted bracket search", Status: "bracketed", PeakQPS: 24.5, Found: true, UpperQPS: 25.6, Confidence: 0.96,
				Percentile: 99, BudgetS: 180, ElapsedS: 171.5, ClosedLoopQPS: 48.1, PredictedQPS: 26.3, Disturbed: 1,
				Trials: []Trial{
					{TargetQPS: 10, AchievedQPS: 9.8, Planned: 50, Completed: 50, WallS: 5.1, P50S: 0.021, P99S: 0.030, SLA: SLAResult{Percentile: 99, ObservedS: f64(0.029), Violations: 0, Met: true}},
					{TargetQPS: 20, AchievedQPS: 19.9, Planned: 50, Completed: 50, P50S: 0.022, P99S: 0.040, SLA: SLAResult{Percentile: 99, ObservedS: f64(0.040), Violations: 0, Met: true}},
					{TargetQPS: 40, AchievedQPS: 30.2, Planned: 80, Completed: 31, P50S: 0.120, P99S: 0.400, SLA: SLAResult{Percentile: 99, Violations: 12, Met: false}, Aborted: true,
						Interval: &stats.Interval{Percentile: 99, Lower: f64(0.350), Confidence: 0.95}},
					{TargetQPS: 24.5, AchievedQPS: 24.4, Planned: 1000, Completed: 40, P50S: 0.150, P99S: 0.400, SLA: SLAResult{Percentile: 99, Violations: 9, Met: false},
						Aborted: true, Measurement: MeasurementDisturbed, Disturbance: "another process took 60% of the bench's core"},
				},
			},
		},
		Jitter: &Jitter{StdS: 0.003, TailRatio: 2.3, MaxDeltaS: 0.025, MeanDeltaS: 0.002, MADS: 0.001, K: 5, ThresholdS: 0.0274, OutlierCount: 2,
			Outliers: []Outlier{{Run: 17, OffsetS: 0.7, LatencyS: 0.046}, {Run: 80, OffsetS: 3.3, LatencyS: 0.031}}},
		BatchSweep: &BatchSweep{ReferenceBatch: 1, BestBatch: 4, BestRule: "highest items/s among the sizes meeting the SLA",
			Steps: []BatchStep{
				{Batch: 1, Latency: stats.Summary{P50: 0.001, P99: 0.0012}, RunsPerS: 950, ItemsPerS: 950, Speedup: 1, Efficiency: 1, SLA: &SLAResult{Met: true}},
				{Batch: 4, Latency: stats.Summary{P50: 0.002, P99: 0.0025}, RunsPerS: 480, ItemsPerS: 1920, Speedup: 2.02, Efficiency: 0.505, SLA: &SLAResult{Met: true}},
				{Batch: 16, Latency: stats.Summary{P50: 0.009, P99: 0.011}, RunsPerS: 110, ItemsPerS: 1760, Speedup: 1.85, Efficiency: 0.116, SLA: &SLAResult{Met: false}},
			}},
		Generation: &Generation{Generations: 30, PromptTokens: 32, OutputTokens: 16, Batch: 1, Layers: 4, Heads: 4, HeadDim: 32, Vocab: 512,
			TTFT:             stats.Summary{Count: 30, Min: 0.0014, P50: 0.0019, P90: 0.0061, P99: 0.0198, Max: 0.0253},
			TPOT:             stats.Summary{Count: 30, Min: 0.0005, P50: 0.0008, P90: 0.0025, P99: 0.0037, Max: 0.0038},
			TokensPerS:       stats.Summary{P50: 1080.5},
			DecodeTokensPerS: stats.Summary{P50: 1198.5},
			KVCacheBytes:     192512},
	}
}

func TestWriteLoadTextGolden(t *testing.T) {
	var b bytes.Buffer
	p := &printer{w: &b}
	writeLoadText(&b, p, loadReport())
	if p.err != nil {
		t.Fatal(p.err)
	}
	golden := filepath.Join("testdata", "load_text.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("text differs from %s (go test -update rewrites it):\n%s", golden, b.String())
	}
}

func TestWriteLoadTextSections(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Report)
		want    []string
		notWant []string
	}{
		{"everything", func(*Report) {}, []string{"Warm-up", "Load: server", "SLA search: peak rate between 24.5 requests/s (met) and 25.6 (missed) at p99, 96% confidence; 4 trials (1 disturbed) in 2m52s of a 3m0s budget",
			"disturbed at 24.5 requests/s: another process", "Jitter", "Batch sweep", "Generation: "}, nil},
		{"plain single-stream hides the load line", func(r *Report) {
			r.Load = &Load{Scenario: "single-stream", Concurrency: 1, LatencyFrom: "issue"}
			r.BatchSweep, r.Generation = nil, nil
		}, []string{"Warm-up", "Jitter"}, []string{"Load:", "Batch sweep", "Generation"}},
		{"single-stream with an SLA shows it", func(r *Report) {
			r.Load.Scenario, r.Load.Search, r.Load.TargetQPS = "single-stream", nil, 0
		}, []string{"Load: single-stream", "SLA       p99 ≤ 50.00ms: met"}, []string{"SLA search", "target    "}},
		{"missed SLA on a failed request", func(r *Report) {
			r.Load.SLA = &SLAResult{ThresholdS: 0.05, Percentile: 99, Requests: 10, Violations: 2, Compliance: 0.8}
		}, []string{"MISSED (p99 a failed request; 2 of 10 requests over, compliance 80.00%)"}, nil},
		{"search without a peak", func(r *Report) {
			r.Load.Search.Found, r.Load.Search.PeakQPS, r.Load.Search.Note = false, 0, "no trial met the SLA"
		}, []string{"peak rate below 25.6 requests/s (missed at p99; no rate proven to meet it)", "note: no trial met the SLA"}, nil},
		{"search not provable in budget", func(r *Report) {
			r.Load.Search = &SLASearch{Status: "not provable in budget", BudgetS: 20, ElapsedS: 12, Percentile: 99, Note: "give the search more time (--sla-budget 4m0s)"}
		}, []string{"SLA search: not provable in budget; 0 trials in 12s of a 20s budget", "--sla-budget 4m0s"}, []string{"target/s"}},
		{"not steady", func(r *Report) { r.Warmup.Steady = false }, []string{"not reached (10-run windows, medians within 5%)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := loadReport()
			tt.edit(r)
			var b bytes.Buffer
			if err := WriteText(&b, r); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("has %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// TestLoadSectionsRoundTrip writes and reads a report: every field of the
// load sections survives the JSON.
func TestLoadSectionsRoundTrip(t *testing.T) {
	r := loadReport()
	path := filepath.Join(t.TempDir(), "report.json")
	if err := r.Write(path); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, pair := range map[string][2]any{
		"warmup": {r.Warmup, back.Warmup}, "load": {r.Load, back.Load}, "jitter": {r.Jitter, back.Jitter},
		"batch_sweep": {r.BatchSweep, back.BatchSweep}, "generation": {r.Generation, back.Generation},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s changed through JSON:\n%+v\n%+v", name, pair[0], pair[1])
		}
	}
	b, _ := os.ReadFile(path)
	for _, key := range []string{`"observed_s": 0.046`, `"p99_over_p50"`, `"scaling_efficiency"`, `"ttft_s"`, `"curve_s"`, `"sla_search"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("report.json lacks %s", key)
		}
	}
}

// TestBatchSweepSufficiency: the batch-sweep table applies the main
// table's rule: a percentile its runs cannot bound (p99 of 20 runs) is
// "—", in the text and the Markdown.
func TestBatchSweepSufficiency(t *testing.T) {
	var xs []float64
	for i := range 20 {
		xs = append(xs, 0.010+0.0001*float64(i))
	}
	s := stats.Summarize(xs)
	if s.Supported(99) || !s.Supported(50) {
		t.Fatal("20 runs should bound p50 and not p99")
	}
	r := &Report{Model: Model{Name: "m"}, BatchSweep: &BatchSweep{ReferenceBatch: 1, Steps: []BatchStep{{Batch: 1, Latency: s, RunsPerS: 90, ItemsPerS: 90, Speedup: 1, Efficiency: 1}}}}
	var text, md bytes.Buffer
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	p99 := units.Duration(s.P99)
	for name, out := range map[string]string{"text": text.String(), "Markdown": md.String()} {
		i := strings.Index(out, "atch sweep")
		if i < 0 {
			t.Fatalf("%s has no batch sweep:\n%s", name, out)
		}
		sweep := out[i:]
		if strings.Contains(sweep, p99) || !strings.Contains(sweep, "—") {
			t.Errorf("%s batch sweep shows p99 %s from 20 runs:\n%s", name, p99, sweep)
		}
	}
}

// TestTrialOutcome: a trial's verdict in the search table and the
// progress line says missed only when the SLA was shown missed; a trial
// whose percentile fell under the threshold but whose requests were too
// few to prove it is "under the threshold", not "missed" (a trial line
// once read "p95 1.918ms: missed" against a 2 ms SLA).
func TestTrialOutcome(t *testing.T) {
	sla := func(obs float64, met bool, verdict string) SLAResult {
		return SLAResult{ThresholdS: 0.002, Percentile: 95, ObservedS: f64(obs), Met: met, Verdict: verdict}
	}
	for _, tc := range []struct {
		name  string
		trial Trial
		want  string
	}{
		{"proven met", Trial{SLA: sla(0.0015, true, "met")}, "met"},
		{"proven missed", Trial{SLA: sla(0.0025, false, "missed")}, "missed"},
		{"stopped early, proven missed", Trial{SLA: sla(0.0025, false, "missed"), Aborted: true}, "missed (stopped early)"},
		{"stopped early, undecided", Trial{SLA: sla(0.0025, false, "insufficient requests"), Aborted: true}, "stopped undecided: too many over to prove it met, too few to prove it missed"},
		{"stopped early, report without a verdict", Trial{SLA: SLAResult{ThresholdS: 0.002, Percentile: 95, ObservedS: f64(0.003)}, Aborted: true}, "missed (stopped early)"},
		{"disturbed", Trial{SLA: sla(0.0025, false, "missed"), Measurement: MeasurementDisturbed}, "disturbed, not counted"},
		{"under, undecided", Trial{SLA: sla(0.001918, false, "insufficient requests")}, "under the threshold, too few requests to prove it met"},
		{"over, undecided", Trial{SLA: sla(0.0021, false, "insufficient requests")}, "over the threshold, too few requests to prove it missed"},
		{"failed request, undecided", Trial{SLA: SLAResult{ThresholdS: 0.002, Percentile: 95, Verdict: "insufficient requests"}}, "over the threshold, too few requests to prove it missed"},
		{"report without a verdict", Trial{SLA: SLAResult{ThresholdS: 0.002, Percentile: 95, ObservedS: f64(0.003)}}, "missed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.trial.Outcome(); got != tc.want {
				t.Errorf("Outcome() = %q, want %q", got, tc.want)
			}
			r := &Report{Load: &Load{Search: &SLASearch{Trials: []Trial{tc.trial}}}}
			var b bytes.Buffer
			if err := WriteText(&b, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("the trial table does not say %q:\n%s", tc.want, b.String())
			}
		})
	}
}
