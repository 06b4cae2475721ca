package bench

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/testenv"
)

// dynModel writes the dynamic-batch synthetic model: input "x" [batch, 64].
func dynModel(t testing.TB) string {
	t.Helper()
	testenv.RequireORT(t)
	path := filepath.Join(t.TempDir(), "dyn.onnx")
	if err := onnxgen.DynamicBatch(64, 4).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// telemetry is an SDK recording in memory.
type telemetry struct {
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
}

func newTelemetry(t testing.TB) *telemetry {
	tel := &telemetry{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	t.Cleanup(func() {
		tel.mp.Shutdown(context.Background())
		tel.tp.Shutdown(context.Background())
	})
	return tel
}

func (tel *telemetry) metrics(t testing.TB) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// count returns the number of values a histogram recorded.
func count(m metricdata.Metrics) uint64 {
	var n uint64
	switch d := m.Data.(type) {
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			n += dp.Count
		}
	case metricdata.Histogram[int64]:
		for _, dp := range d.DataPoints {
			n += dp.Count
		}
	}
	return n
}

// fakeHardware counts the phases it sampled.
type fakeHardware struct {
	mu     sync.Mutex
	open   bool
	phases []int
}

func (f *fakeHardware) Start(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open = true
	return nil
}

func (f *fakeHardware) Stop(runs int) *report.Hardware {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open {
		f.phases = append(f.phases, runs)
	}
	f.open = false
	return &report.Hardware{}
}

// TestRunStallCoordinatedOmission runs the whole bench on a real model in a
// synctest bubble. ONNX Runtime's runs take no bubble time, so the test hook
// alone sets every latency: 2ms, and one 200ms stall at request 50. In the
// server scenario at 100 requests/s the stall shows up in the tail (every
// request due during it waits); single-stream, only once.
func TestRunStallCoordinatedOmission(t *testing.T) {
	model := dynModel(t)
	hook := func(seq int) { time.Sleep(stall(seq)) }
	run := func(sc Scenario, qps float64) *report.Report {
		var rep *report.Report
		synctest.Test(t, func(t *testing.T) {
			var err error
			rep, err = Run(context.Background(), Config{
				ModelPath: model, Scenario: sc, QPS: qps, Runs: 200, Warmup: 2,
				IntraOpThreads: 1, Seed: 1, runHook: hook,
			})
			if err != nil {
				t.Fatal(err)
			}
		})
		return rep
	}
	closed := run(SingleStream, 0)
	open := run(Server, 100)
	over := func(r *report.Report) int {
		n := 0
		for _, s := range r.Latency.Samples {
			if s > 0.020 {
				n++
			}
		}
		return n
	}
	if n := over(closed); n != 1 || closed.Latency.P99 > 0.003 {
		t.Errorf("single-stream: %d requests over 20ms, p99 %v; want the stall once and a 2ms p99", n, closed.Latency.P99)
	}
	if n := over(open); n < 10 || open.Latency.P99 < 0.150 {
		t.Errorf("server: %d requests over 20ms, p99 %v; want the requests queued behind the stall in the tail", n, open.Latency.P99)
	}
	if q := open.Load.QueueWait; q == nil || q.Max < 0.150 || open.Load.MaxQueueDepth < 10 {
		t.Errorf("server queueing %+v, deepest %d", q, open.Load.MaxQueueDepth)
	}
	if closed.Jitter.OutlierCount != 1 || closed.Jitter.Outliers[0].Run != 50 {
		t.Errorf("single-stream outliers %+v, want run 50", closed.Jitter.Outliers)
	}
	if open.Load.LatencyFrom != "scheduled_arrival" || closed.Load.LatencyFrom != "issue" {
		t.Errorf("latency from %q / %q", open.Load.LatencyFrom, closed.Load.LatencyFrom)
	}
}

// TestRunWarmupAuto: in a bubble every run takes no time, so the latency is
// flat from the first run and the test passes as soon as it can look: two
// windows after the cold run, 20 warm-up runs.
func TestRunWarmupAuto(t *testing.T) {
	model := dynModel(t)
	synctest.Test(t, func(t *testing.T) {
		rep, err := Run(context.Background(), Config{ModelPath: model, WarmupAuto: true, WarmupMax: 100, Runs: 5, IntraOpThreads: 1})
		if err != nil {
			t.Fatal(err)
		}
		w := rep.Warmup
		if w.Mode != "auto" || !w.Steady || w.SteadyAfterRuns != 1 || w.DetectedAfterRuns != 21 || w.Runs != 20 || len(w.CurveS) != 21 {
			t.Errorf("warm-up %+v", w)
		}
		if w.ModelLoadS <= 0 && w.InitializationS <= 0 {
			t.Errorf("no load/initialization split: %+v, notes %v", w, rep.Notes)
		}
	})
}

func TestRunScenariosConcurrentSafe(t *testing.T) {
	model := dynModel(t)
	tests := []struct {
		name     string
		cfg      Config
		sessions int
		queued   bool
	}{
		{"single-stream", Config{Scenario: SingleStream}, 1, false},
		{"concurrent shared", Config{Scenario: Concurrent, Concurrency: 2}, 1, false},
		{"concurrent per-worker", Config{Scenario: Concurrent, Concurrency: 2, Sessions: PerWorkerSessions}, 2, false},
		{"offline", Config{Scenario: Offline, Concurrency: 2}, 1, true},
		{"server", Config{Scenario: Server, QPS: 400, Concurrency: 2, SLA: &SLA{Threshold: time.Second, Percentile: 99},
			MaxTrials: 2, TrialDuration: 50 * time.Millisecond, SLABudget: 10 * time.Second}, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tel := newTelemetry(t)
			hw := &fakeHardware{}
			cfg := tt.cfg
			cfg.ModelPath, cfg.Runs, cfg.Warmup, cfg.IntraOpThreads, cfg.ProfileRuns = model, 30, 3, 1, 2
			cfg.MeterProvider, cfg.TracerProvider, cfg.Hardware = tel.mp, tel.tp, hw
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ld := rep.Load
			if ld == nil || ld.Scenario != string(cfg.Scenario) || ld.Completed != 30 || ld.Requests != 30 || rep.Latency.Count != 30 {
				t.Fatalf("load %+v, latency count %d", ld, rep.Latency.Count)
			}
			if ld.AchievedQPS <= 0 || rep.Throughput.RunsPerS != ld.AchievedQPS || rep.Jitter == nil {
				t.Errorf("achieved %v, throughput %+v, jitter %v", ld.AchievedQPS, rep.Throughput, rep.Jitter)
			}
			if (ld.QueueWait != nil) != tt.queued {
				t.Errorf("queue wait %v for %s", ld.QueueWait, cfg.Scenario)
			}
			if len(rep.Warmup.CurveS) != 4 || rep.Warmup.Runs != 3 {
				t.Errorf("warm-up curve %v", rep.Warmup.CurveS)
			}
			if rep.Operators == nil || rep.Operators.ProfiledRuns != 2 {
				t.Errorf("operators %+v", rep.Operators)
			}
			search := 0 // the search's phases: its closed-loop phase and trials
			if ld.Search != nil {
				search = 1 + len(ld.Search.Trials)
			}
			if len(hw.phases) != search+1 || hw.phases[search] != 30 || rep.Hardware == nil {
				t.Errorf("hardware phases %v with %d SLA-search phases", hw.phases, search)
			}
			m := tel.metrics(t)
			if n := count(m[semconv.OrtelLoadRequestDurationName]); n != 30 {
				t.Errorf("%s count %d, want 30", semconv.OrtelLoadRequestDurationName, n)
			}
			if n := count(m[semconv.OnnxruntimeSessionCreationDurationName]); n != uint64(tt.sessions) {
				t.Errorf("sessions created %d, want %d", n, tt.sessions)
			}
			if _, ok := m[semconv.OrtelLoadQueueDepthName]; ok != tt.queued {
				t.Errorf("queue depth exported: %t", ok)
			}
			if _, ok := m[semconv.OrtelLoadQueueWaitName]; ok != tt.queued {
				t.Errorf("queue wait exported: %t", ok)
			}
			for _, name := range []string{semconv.OrtelLoadThroughputName, semconv.OrtelJitterStddevName, semconv.OrtelWarmupFirstRunDurationName, semconv.OnnxruntimeSessionLoadDurationName} {
				if _, ok := m[name]; !ok {
					t.Errorf("%s not exported", name)
				}
			}
			if cfg.SLA != nil {
				// Real clock: whether the requests met the threshold
				// depends on the machine's load; that the verdict
				// matches the latencies does not.
				over := 0
				for _, s := range rep.Latency.Samples {
					if s > cfg.SLA.Threshold.Seconds() {
						over++
					}
				}
				if ld.SLA == nil || ld.SLA.Requests != 30 || ld.SLA.Violations != over+ld.Errors || ld.SLA.Met != (over+ld.Errors == 0) {
					t.Errorf("SLA %+v with %d of 30 latencies over the threshold and %d errors", ld.SLA, over, ld.Errors)
				}
				v := m[semconv.OrtelSLAViolationsName].Data.(metricdata.Sum[int64]).DataPoints[0]
				if th, _ := v.Attributes.Value(semconv.OrtelSLAThresholdKey); th.AsFloat64() != 1 {
					t.Errorf("violations attributes %v", v.Attributes)
				}
			}
			// Every measured request is a run span under no parent.
			runs := 0
			for _, s := range tel.spans.Ended() {
				if strings.HasPrefix(s.Name(), "run ") {
					runs++
				}
			}
			// first + 3 warm-up + other workers' runs + 30 + 2 profiled
			if runs < 36 {
				t.Errorf("%d run spans", runs)
			}
		})
	}
}

// TestRunServerSLASearch searches the peak rate with short trials and
// exports it. It runs in a synctest bubble, where ONNX Runtime's runs take
// no time and the hook makes each request take 1ms: on the real clock a
// loaded machine stalls the process past the 200ms threshold and the
// trials miss (seen with two busy loops beside the test).
func TestRunServerSLASearch(t *testing.T) {
	model := dynModel(t)
	tel := newTelemetry(t)
	hw := &fakeHardware{}
	var rep *report.Report
	synctest.Test(t, func(t *testing.T) {
		var err error
		rep, err = Run(context.Background(), Config{
			ModelPath: model, Scenario: Server, QPS: 100, Runs: 30, Warmup: 3, IntraOpThreads: 1,
			SLA: &SLA{Threshold: 200 * time.Millisecond, Percentile: 95}, TrialDuration: 100 * time.Millisecond, MaxTrials: 3,
			MeterProvider: tel.mp, Hardware: hw, runHook: func(int) { time.Sleep(time.Millisecond) },
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	s := rep.Load.Search
	if s == nil || len(s.Trials) != 3 || !strings.Contains(s.Method, "bisect") {
		t.Fatalf("search %+v", s)
	}
	// A tiny model at 100, 130, 169 requests/s (up 30% after each pass,
	// far below its closed-loop capacity) meets a 200ms p95: each trial
	// stops once its verdict is met, after at least the 130 requests a
	// p95 verdict needs, before its most.
	least := trialSize(SLA{Percentile: 95}, 0, 0)
	for i, tr := range s.Trials {
		if math.Abs(tr.TargetQPS-100*math.Pow(1.3, float64(i))) > 1e-9 || !tr.SLA.Met || tr.Completed < least || tr.Completed >= tr.Planned || tr.Hardware == nil {
			t.Errorf("trial %d: %+v", i, tr)
		}
	}
	if !s.Found || math.Abs(s.PeakQPS-169) > 1e-9 || !strings.Contains(s.Note, "stopped after 3 trials") || s.ClosedLoopQPS < 169 {
		t.Errorf("peak %v found %t note %q closed loop %v", s.PeakQPS, s.Found, s.Note, s.ClosedLoopQPS)
	}
	if rep.Load.TargetQPS != 100 || rep.Load.Completed != 30 {
		t.Errorf("the measured phase ran at %v requests/s, %d requests; want --qps 100", rep.Load.TargetQPS, rep.Load.Completed)
	}
	if len(hw.phases) != 5 {
		t.Errorf("hardware sampled %d phases, want the closed-loop phase, 3 trials and the measured phase", len(hw.phases))
	}
	m := tel.metrics(t)
	c, ok := m[semconv.OrtelSLACapacityName]
	if !ok || math.Abs(c.Data.(metricdata.Gauge[float64]).DataPoints[0].Value-169) > 1e-9 {
		t.Errorf("capacity gauge %+v", c)
	}
	if _, ok := m[semconv.OrtelLoadQueueDepthName]; !ok {
		t.Error("queue depth not exported")
	}
}

// TestRunServerAfterSearchIsCapped: after an SLA search, the measured
// phase at the rate found stops issuing requests after a minute (100
// requests at 1 request/s would take 100s), and the report says so.
func TestRunServerAfterSearchIsCapped(t *testing.T) {
	model := dynModel(t)
	var rep *report.Report
	synctest.Test(t, func(t *testing.T) {
		var err error
		rep, err = Run(context.Background(), Config{
			ModelPath: model, Scenario: Server, QPS: 1, Runs: 100, Warmup: 3, IntraOpThreads: 1,
			SLA: &SLA{Threshold: 200 * time.Millisecond, Percentile: 95}, MaxTrials: 1,
			runHook: func(int) { time.Sleep(time.Millisecond) },
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	if s := rep.Load.Search; s == nil || len(s.Trials) != 1 {
		t.Fatalf("search %+v: want one trial", s)
	}
	if c := rep.Load.Completed; c >= 100 || c < 40 || rep.Load.TargetQPS != 1 {
		t.Errorf("the measured phase ran %d requests at %v requests/s; want about 60 (a minute at 1/s), fewer than 100", c, rep.Load.TargetQPS)
	}
	if !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "stopped issuing requests after 1m0s") }) {
		t.Errorf("no note on the capped phase in %q", rep.Notes)
	}
}

func TestRunBatchSweep(t *testing.T) {
	tel := newTelemetry(t)
	rep, err := Run(context.Background(), Config{
		ModelPath: dynModel(t), Batches: []int64{1, 2, 4, 8}, Runs: 15, Warmup: 2, IntraOpThreads: 1,
		SLA: &SLA{Threshold: time.Second, Percentile: 99}, MeterProvider: tel.mp,
	})
	if err != nil {
		t.Fatal(err)
	}
	sw := rep.BatchSweep
	if sw == nil || len(sw.Steps) != 4 || sw.ReferenceBatch != 1 || sw.BestRule != bestRuleSLA {
		t.Fatalf("sweep %+v", sw)
	}
	// Real clock: whether a step meets the 1s p99 depends on the
	// machine's load; that its verdict matches its latency, and that the
	// best batch is the fastest of those meeting it, do not.
	var best report.BatchStep
	for i, s := range sw.Steps {
		if s.Batch != []int64{1, 2, 4, 8}[i] || s.Latency.Count != 15 || s.SLA == nil || s.SLA.Requests != 15 {
			t.Fatalf("step %d: %+v", i, s)
		}
		if met := s.SLA.ObservedS != nil && *s.SLA.ObservedS <= 1; s.SLA.Met != met {
			t.Errorf("step %d: SLA met %t with p99 %v", i, s.SLA.Met, s.SLA.ObservedS)
		}
		if d := s.ItemsPerS - s.RunsPerS*float64(s.Batch); d > 1e-6 || d < -1e-6 {
			t.Errorf("batch %d: %v items/s at %v runs/s", s.Batch, s.ItemsPerS, s.RunsPerS)
		}
		want := s.ItemsPerS / sw.Steps[0].ItemsPerS / float64(s.Batch)
		if d := s.Efficiency - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("batch %d efficiency %v, want %v", s.Batch, s.Efficiency, want)
		}
		if s.SLA.Met && s.ItemsPerS > best.ItemsPerS {
			best = s
		}
	}
	if sw.BestBatch != best.Batch {
		t.Errorf("best batch %d, want %d", sw.BestBatch, best.Batch)
	}
	if rep.Latency.Count != 15 || !slices.Equal(rep.Model.Inputs[0].Shape, []int64{1, 64}) || rep.Config.Batch != 1 {
		t.Errorf("main phase: %d runs, input %v, batch %d", rep.Latency.Count, rep.Model.Inputs[0].Shape, rep.Config.Batch)
	}
	m := tel.metrics(t)
	g := m[semconv.OrtelBatchThroughputName].Data.(metricdata.Gauge[float64])
	sizes := map[int64]bool{}
	for _, dp := range g.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(semconv.OrtelBatchSizeKey))
		sizes[v.AsInt64()] = true
	}
	if len(sizes) != 4 || !sizes[8] {
		t.Errorf("throughput gauge batch sizes %v", sizes)
	}
	if n := count(m[semconv.OrtelBatchDurationName]); n != 60 {
		t.Errorf("batch duration count %d, want 4 × 15", n)
	}
}

func TestRunGenerate(t *testing.T) {
	tel := newTelemetry(t)
	cfg := onnxgen.DecoderConfig{Layers: 2, Heads: 2, HeadDim: 8, Vocab: 64, Seed: 5}
	rep, err := Run(context.Background(), Config{
		ModelPath: decoderModel(t, cfg), Generate: 5, PromptTokens: 8, Runs: 6, Warmup: 1, ProfileRuns: 3,
		IntraOpThreads: 1, Seed: 2, MeterProvider: tel.mp, TracerProvider: tel.tp,
	})
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Generation
	if g == nil || g.Generations != 6 || g.TTFT.Count != 6 || g.TPOT.Count != 6 || g.Layers != 2 || g.Vocab != 64 || len(g.GeneratedIDs) != 5 {
		t.Fatalf("generation %+v", g)
	}
	if want := int64(2*2*2*8*(8+5-1)) * 4; g.KVCacheBytes != want {
		t.Errorf("KV cache %d, want %d", g.KVCacheBytes, want)
	}
	if g.TTFT.P50 <= 0 || g.TPOT.P50 <= 0 || g.TokensPerS.P50 <= 0 {
		t.Errorf("times %+v %+v", g.TTFT, g.TPOT)
	}
	if rep.Throughput.ItemsPerS < 4*rep.Throughput.RunsPerS {
		t.Errorf("tokens/s %v at %v generations/s", rep.Throughput.ItemsPerS, rep.Throughput.RunsPerS)
	}
	if rep.Operators == nil || rep.Operators.ProfiledRuns != 3 {
		t.Errorf("operators %+v", rep.Operators)
	}
	// first + warm-up + 6 measured + 1 profiled generation
	m := tel.metrics(t)
	for _, name := range []string{semconv.GenAIServerTimeToFirstTokenName, semconv.GenAIServerTimePerOutputTokenName} {
		if n := count(m[name]); n != 9 {
			t.Errorf("%s count %d, want 9", name, n)
		}
	}
	gens := 0
	for _, s := range tel.spans.Ended() {
		if s.Name() == "text_completion decoder" {
			gens++
		}
	}
	if gens != 9 {
		t.Errorf("%d generation spans, want 9", gens)
	}
}

func TestRunRejects(t *testing.T) {
	chain := filepath.Join(t.TempDir(), "chain.onnx")
	testenv.RequireORT(t)
	if err := onnxgen.MatMulAddChain(2, 8).WriteFile(chain); err != nil {
		t.Fatal(err)
	}
	sla := &SLA{Threshold: time.Millisecond, Percentile: 99}
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"server without rate", Config{Scenario: Server}, "target rate (QPS 20)"},
		{"rate without server", Config{QPS: 5}, "QPS applies to Scenario server only"},
		{"single-stream with workers", Config{Concurrency: 3}, "needs Scenario concurrent"},
		{"sweep under load", Config{Scenario: Concurrent, Batches: []int64{1, 2}}, "single-stream"},
		{"generation in batches", Config{Generate: 4, Batch: 2}, "one sequence at a time"},
		{"generation with an SLA", Config{Generate: 4, SLA: sla}, "time to first token"},
		{"per-worker with one worker", Config{Scenario: Server, QPS: 1, Sessions: PerWorkerSessions}, "2 workers"},
		{"sweep on a fixed batch", Config{Batches: []int64{1, 2}}, "dynamic batch"},
		{"generation on a non-decoder", Config{Generate: 4}, "is not one Generate can feed"},
		{"unknown scenario", Config{Scenario: "bursty"}, `Scenario "bursty": want one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.ModelPath = chain
			_, err := Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
