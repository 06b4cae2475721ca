package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/testenv"
)

// metricNames lists every metric name in an OTLP/JSON lines file.
func metricNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	err = otlpjson.ReadMetrics(f, func(req *colmetricspb.ExportMetricsServiceRequest) error {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					names[m.Name] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func histogramCount(m *metricspb.Metric) (count uint64, bounds []float64) {
	switch d := m.GetData().(type) {
	case *metricspb.Metric_Histogram:
		for _, dp := range d.Histogram.DataPoints {
			count += dp.Count
			bounds = dp.ExplicitBounds
		}
	case *metricspb.Metric_ExponentialHistogram:
		for _, dp := range d.ExponentialHistogram.DataPoints {
			count += dp.Count
		}
	}
	return count, bounds
}

// TestBenchServerSLAOnPaddleOCR is the server scenario with an SLA search on
// the real PaddleOCR detection model (small input, short trials, a 40s
// budget).
func TestBenchServerSLAOnPaddleOCR(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx")
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "bench", "paddleocr-det", "--shape", "x=1,3,96,96", "--threads", "1",
		"--scenario", "server", "--sla", "100ms", "--trial-duration", "300ms", "--sla-trials", "4", "--sla-budget", "40s",
		"--runs", "30", "--warmup", "3", "--profile-runs", "0", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Load: server scenario", "SLA search: ", "SLA       p99 ≤ 100.00ms", "Jitter", "Warm-up"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Load.Search
	if s == nil || s.Status == "" || s.BudgetS != 40 || s.ClosedLoopQPS <= 0 || len(s.Trials) > 4 {
		t.Fatalf("search %+v", s)
	}
	if rep.Load.SLA == nil || rep.Load.SLA.Requests != 30 || rep.Load.LatencyFrom != "scheduled_arrival" {
		t.Errorf("load %+v", rep.Load)
	}
	names := metricNames(t, filepath.Join(out, "metrics.jsonl"))
	for _, want := range []string{"ortel.load.queue.depth", "ortel.load.queue.wait", "ortel.load.request.duration",
		"ortel.sla.violations", "ortel.sla.compliance", "ortel.load.throughput", "onnxruntime.session.load.duration"} {
		if !names[want] {
			t.Errorf("metrics.jsonl has no %s", want)
		}
	}
	if s.Found && !names["ortel.sla.capacity"] {
		t.Error("a peak was found but ortel.sla.capacity is not exported")
	}
}

func TestBenchBatchSweep(t *testing.T) {
	testenv.RequireORT(t)
	model := filepath.Join(t.TempDir(), "dyn.onnx")
	if err := onnxgen.DynamicBatch(64, 4).WriteFile(model); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "bench", model, "--batch", "1,2,4,8", "--runs", "10", "--warmup", "2",
		"--threads", "1", "--profile-runs", "0", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "Batch sweep (against batch 1; best batch") || !strings.Contains(stdout, "efficiency") {
		t.Errorf("no batch sweep in the report:\n%s", stdout)
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sw := rep.BatchSweep; sw == nil || len(sw.Steps) != 4 || sw.BestBatch == 0 || sw.Steps[3].Batch != 8 {
		t.Fatalf("sweep %+v", rep.BatchSweep)
	}
	names := metricNames(t, filepath.Join(out, "metrics.jsonl"))
	for _, want := range []string{"ortel.batch.throughput", "ortel.batch.scaling_efficiency", "ortel.batch.duration"} {
		if !names[want] {
			t.Errorf("metrics.jsonl has no %s", want)
		}
	}
}

// benchSyntheticDecoder runs bench --generate 6 on a 2-layer synthetic
// decoder with 5 generations from an 8-token prompt and profileRuns
// profiled runs, into a fresh --out; it returns that folder and stdout.
func benchSyntheticDecoder(t *testing.T, profileRuns int) (out, stdout string) {
	t.Helper()
	testenv.RequireORT(t)
	model := filepath.Join(t.TempDir(), "decoder.onnx")
	if err := onnxgen.Decoder(onnxgen.DecoderConfig{Layers: 2, Heads: 2, HeadDim: 16, Vocab: 96, Seed: 4}).WriteFile(model); err != nil {
		t.Fatal(err)
	}
	out = t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "bench", model, "--generate", "6", "--prompt-tokens", "8", "--runs", "5",
		"--warmup", "1", "--threads", "1", "--profile-runs", strconv.Itoa(profileRuns), "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("bench --generate: exit %d\n%s\n%s", code, stdout, stderr)
	}
	return out, stdout
}

// TestBenchGenerate drives the synthetic decoder and finds TTFT and TPOT as
// gen_ai histograms in the OTLP output, with the generation spans above the
// runs.
func TestBenchGenerate(t *testing.T) {
	out, stdout := benchSyntheticDecoder(t, 2)
	for _, want := range []string{"Generation: 5 generations of 6 tokens from a 8-token prompt", "time to first token", "time per output token", "KV cache"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if g := rep.Generation; g == nil || g.TTFT.Count != 5 || g.TPOT.Count != 5 || g.KVCacheBytes != 2*2*2*16*(8+6-1)*4 {
		t.Fatalf("generation %+v", rep.Generation)
	}
	// first + 1 warm-up + 5 measured + 1 profiled generation.
	metrics := filepath.Join(out, "metrics.jsonl")
	ttft := lastMetric(t, metrics, "gen_ai.server.time_to_first_token")
	tpot := lastMetric(t, metrics, "gen_ai.server.time_per_output_token")
	if ttft == nil || tpot == nil {
		t.Fatal("metrics.jsonl lacks the gen_ai histograms")
	}
	if n, bounds := histogramCount(ttft); n != 8 || len(bounds) != 16 || bounds[0] != 0.001 {
		t.Errorf("TTFT histogram: %d values, bounds %v", n, bounds)
	}
	if n, bounds := histogramCount(tpot); n != 8 || len(bounds) != 13 || bounds[0] != 0.01 {
		t.Errorf("TPOT histogram: %d values, bounds %v", n, bounds)
	}

	spans := readSpans(t, filepath.Join(out, "traces.jsonl"))
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byID[string(s.SpanId)] = s
	}
	gens, decodeRuns := 0, 0
	for _, s := range spans {
		switch s.Name {
		case "text_completion decoder":
			gens++
			if v, ok := attrValue(s, "gen_ai.usage.output_tokens"); !ok || !strings.Contains(v, "6") {
				t.Errorf("generation span output tokens %q", v)
			}
		case "run decoder":
			if p := byID[string(s.ParentSpanId)]; p != nil && p.Name == "decode" {
				decodeRuns++
			}
		}
	}
	if gens != 8 || decodeRuns != 8*5 {
		t.Errorf("%d generation spans, %d runs under decode spans; want 8 and 40", gens, decodeRuns)
	}
}

func TestBenchLoadBadFlags(t *testing.T) {
	model := chainModel(t)
	out := filepath.Join(t.TempDir(), "out")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"unknown scenario", []string{"--scenario", "bursty"}, 2, "single-stream, concurrent, server, offline"},
		{"sla without unit", []string{"--sla", "20"}, 2, "not a positive duration"},
		{"sla percentile 100", []string{"--sla", "20ms@p100"}, 2, "between 0 and 100"},
		{"batch zero", []string{"--batch", "1,0"}, 2, "1 or more"},
		{"batch twice", []string{"--batch", "2,2"}, 2, "given twice"},
		{"warmup word", []string{"--warmup", "soon"}, 2, "or auto"},
		{"qps without server", []string{"--qps", "5"}, 2, "--scenario server only"},
		{"server without rate", []string{"--scenario", "server"}, 2, "needs a target rate"},
		{"workers single-stream", []string{"--concurrency", "2"}, 2, "needs --scenario concurrent"},
		{"generate in batches", []string{"--generate", "4", "--batch", "2"}, 2, "drop --batch"},
		{"generate under load", []string{"--generate", "4", "--scenario", "offline"}, 2, "single-stream"},
		{"sessions word", []string{"--sessions", "both"}, 2, "shared or per-worker"},
		{"per-worker single-stream", []string{"--sessions", "per-worker"}, 2, "needs several workers"},
		{"zero trial", []string{"--scenario", "server", "--sla", "5ms", "--trial-duration", "0s"}, 2, "--trial-duration"},
		{"sweep under load", []string{"--batch", "1,2", "--scenario", "concurrent"}, 2, "single-stream"},
		{"sweep on a fixed batch", []string{"--batch", "1,2"}, 1, "dynamic batch"},
		{"generate on a non-decoder", []string{"--generate", "4"}, 1, "is not one --generate can feed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"bench", "--out", out, "--quiet", "--profile-runs", "0"}, tt.args...)
			code, stdout, stderr := ortel(t, append(args, model)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout+stderr, tt.contains) {
				t.Errorf("output lacks %q:\n%s%s", tt.contains, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "panic") {
				t.Errorf("panic:\n%s", stderr)
			}
		})
	}
}
