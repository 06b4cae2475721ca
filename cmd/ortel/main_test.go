package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/testenv"
)

// ortel runs the CLI in-process and returns exit code, stdout, stderr.
func ortel(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), &env{stdout: &out, stderr: &errb}, args)
	return code, out.String(), errb.String()
}

func chainModel(t *testing.T) string {
	t.Helper()
	testenv.RequireORT(t)
	p := filepath.Join(t.TempDir(), "chain.onnx")
	if err := onnxgen.MatMulAddChain(4, 16).WriteFile(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// readSpans reads every span of an OTLP/JSON lines file.
func readSpans(t *testing.T, path string) []*tracepb.Span {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var spans []*tracepb.Span
	err = otlpjson.ReadTraces(f, func(req *coltracepb.ExportTraceServiceRequest) error {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return spans
}

// lastMetric returns the last exported data of a metric in an OTLP/JSON
// lines file.
func lastMetric(t *testing.T, path, name string) *metricspb.Metric {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last *metricspb.Metric
	err = otlpjson.ReadMetrics(f, func(req *colmetricspb.ExportMetricsServiceRequest) error {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == name {
						last = m
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return last
}

func attrValue(span *tracepb.Span, key string) (string, bool) {
	for _, kv := range span.Attributes {
		if kv.Key == key {
			return kv.Value.String(), true
		}
	}
	return "", false
}

func TestBenchWritesReportAndOTLPFiles(t *testing.T) {
	model := chainModel(t)
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "bench", model, "--runs", "30", "--warmup", "3", "--profile-runs", "2", "--out", out, "--quiet", "--model-name", "chain", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Steady-state latency (30 runs)", "p99.9", "Top operators (2 profiled runs", "Nodes per provider", "traces.jsonl"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Latency.Count != 30 || len(rep.Latency.Samples) != 30 {
		t.Errorf("latency count %d, samples %d, want 30", rep.Latency.Count, len(rep.Latency.Samples))
	}
	if !(rep.Latency.Min <= rep.Latency.P50 && rep.Latency.P50 <= rep.Latency.P99 && rep.Latency.P99 <= rep.Latency.Max) {
		t.Errorf("percentiles out of order: %+v", rep.Latency.Summary)
	}
	if rep.Operators == nil || rep.Operators.ProfiledRuns != 2 || len(rep.Operators.ByType) == 0 || rep.Operators.Nodes == 0 {
		t.Fatalf("operators = %+v", rep.Operators)
	}
	if rep.Session.CreationS <= 0 || rep.Session.FirstRunS <= 0 {
		t.Errorf("cold start not measured: %+v", rep.Session)
	}
	if rep.Telemetry.Mode != "file" || len(rep.Telemetry.Files) != 2 {
		t.Errorf("telemetry = %+v", rep.Telemetry)
	}

	spans := readSpans(t, filepath.Join(out, "traces.jsonl"))
	runs := map[string]*tracepb.Span{}
	for _, s := range spans {
		if s.Name == "run chain" {
			runs[string(s.SpanId)] = s
		}
	}
	// Files and no --run-spans: the 2 profiled runs only (the first run,
	// 3 warm-up and 30 measured ones are in the metrics).
	if len(runs) != 2 {
		t.Fatalf("run spans in traces.jsonl = %d, want the 2 profiled runs", len(runs))
	}
	ops := 0
	for _, s := range spans {
		if _, isOp := attrValue(s, "onnxruntime.node.op_type"); !isOp {
			continue
		}
		ops++
		parent, ok := runs[string(s.ParentSpanId)]
		if !ok {
			t.Fatalf("operator span %q has no run span as parent", s.Name)
		}
		if s.StartTimeUnixNano < parent.StartTimeUnixNano || s.EndTimeUnixNano > parent.EndTimeUnixNano {
			t.Errorf("operator %q outside its run", s.Name)
		}
	}
	if ops != 2*rep.Operators.Nodes {
		t.Errorf("operator spans = %d, want 2 runs × %d nodes", ops, rep.Operators.Nodes)
	}
	// The report points at the profiled runs' spans, and the analysis span
	// hangs under the last of them.
	if len(rep.Operators.RunSpans) != 2 {
		t.Fatalf("report run_spans = %v, want the 2 profiled runs", rep.Operators.RunSpans)
	}
	for _, ref := range rep.Operators.RunSpans {
		found := false
		for _, r := range runs {
			if hex.EncodeToString(r.TraceId) == ref.TraceID && hex.EncodeToString(r.SpanId) == ref.SpanID {
				v, _ := attrValue(r, "onnxruntime.run.profiled")
				found = strings.Contains(v, "true")
			}
		}
		if !found {
			t.Errorf("run_spans entry %+v is no profiled run span in traces.jsonl", ref)
		}
	}
	last := rep.Operators.RunSpans[1]
	analyzed := false
	for _, s := range spans {
		if s.Name == "analyze chain" && len(s.ParentSpanId) == 0 {
			for _, l := range s.Links {
				if hex.EncodeToString(l.SpanId) == last.SpanID && hex.EncodeToString(l.TraceId) == last.TraceID {
					analyzed = true
				}
			}
		}
	}
	if !analyzed {
		t.Error("no root analysis span linked to the last profiled run")
	}
	m := lastMetric(t, filepath.Join(out, "metrics.jsonl"), "onnxruntime.run.duration")
	if m == nil {
		t.Fatal("metrics.jsonl has no onnxruntime.run.duration")
	}
	var count uint64
	switch d := m.Data.(type) {
	case *metricspb.Metric_ExponentialHistogram:
		for _, dp := range d.ExponentialHistogram.DataPoints {
			count += dp.Count
		}
	case *metricspb.Metric_Histogram:
		for _, dp := range d.Histogram.DataPoints {
			count += dp.Count
		}
	}
	if count != 36 {
		t.Errorf("run duration histogram count = %d, want 36", count)
	}
}

// TestBenchSummaryFirst: `ortel bench paddleocr-det` prints its summary,
// at most 25 lines with the progress lines, the findings in them, and the
// rest in report.md and report.html beside report.json; --verbose prints
// the whole text report, and report.json is the same either way.
func TestBenchSummaryFirst(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	args := []string{"bench", "paddleocr-det", "--runs", "5", "--warmup", "1", "--profile-runs", "1", "--no-hardware"}
	out := t.TempDir()
	code, stdout, stderr := ortel(t, append(args, "--out", out)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout+stderr, "\n"); n > 25 {
		t.Errorf("%d lines printed, want at most 25:\n%s%s", n, stderr, stdout)
	}
	for _, want := range []string{"latency ", "p50 ", "findings ", "1. [", filepath.Join(out, "report.html")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "Top operators") || strings.Contains(stdout, "Roofline") {
		t.Errorf("the summary prints the full report's tables:\n%s", stdout)
	}
	for _, f := range []string{"report.md", "report.html"} {
		if b, err := os.ReadFile(filepath.Join(out, f)); err != nil || !strings.Contains(string(b), "Findings") {
			t.Errorf("%s: %v, or it has no findings", f, err)
		}
	}
	verbose := t.TempDir()
	code, stdout, stderr = ortel(t, append(args, "--out", verbose, "--verbose")...)
	if code != 0 || !strings.Contains(stdout, "Top operators") || !strings.Contains(stdout, "Roofline") {
		t.Fatalf("--verbose: exit %d, want the whole report:\n%s\n%s", code, stdout, stderr)
	}
	a, errA := report.Read(filepath.Join(out, "report.json"))
	b, errB := report.Read(filepath.Join(verbose, "report.json"))
	if errA != nil || errB != nil || a.Analysis == nil || b.Analysis == nil || len(a.Analysis.Findings) == 0 || a.Model.Catalog != "paddleocr-det" {
		t.Fatalf("reports: %v, %v; want both analyzed, with findings and the catalog name", errA, errB)
	}
}

func TestBenchRealPaddleOCRWithFlagsAfterModel(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "ch_ppocr_mobile_v2.0_cls_infer.onnx")
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "bench", "paddleocr-cls", "--runs", "10", "--warmup", "1", "--profile-runs", "1", "--out", out, "--format", "json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, `"schema_version": "ortel.report/v1"`) || !strings.Contains(stdout, `"op_type": "Conv"`) {
		t.Errorf("--json output is not the report with Conv operators:\n%.2000s", stdout)
	}
}

func TestBadInput(t *testing.T) {
	model := chainModel(t)
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.onnx")
	os.WriteFile(corrupt, []byte("this is not a protobuf model"), 0o644)
	empty := filepath.Join(dir, "empty.onnx")
	os.WriteFile(empty, nil, 0o644)
	truncated := filepath.Join(dir, "trunc.json")
	os.WriteFile(truncated, []byte(`[{"cat":"Session","pid":1,"tid":1,"dur":5,"ts":0,"ph":"X","name":"model_run","args":{}},{"cat":"No`), 0o644)
	emptyProfile := filepath.Join(dir, "empty.json")
	os.WriteFile(emptyProfile, nil, 0o644)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	out := filepath.Join(dir, "out")

	tests := []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"no command", nil, 2, []string{"Usage"}},
		{"unknown command", []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`}},
		{"missing model", []string{"bench", "--out", out, filepath.Join(dir, "nope.onnx")}, 1, []string{"nope.onnx", "not a known model name"}},
		{"corrupt model", []string{"bench", "--out", out, corrupt}, 1, []string{"corrupt.onnx", "not a valid ONNX model"}},
		{"empty model", []string{"bench", "--out", out, empty}, 1, []string{"empty.onnx", "empty file"}},
		{"wrong shape rank", []string{"bench", "--out", out, "--shape", "x=1,2,3", model}, 1, []string{`input "x"`, "3 dimensions", "declares 2"}},
		{"wrong fixed dim", []string{"bench", "--out", out, "--shape", "x=1,5", model}, 1, []string{"fixes it at 16"}},
		{"unknown input", []string{"bench", "--out", out, "--shape", "img=1,2", model}, 1, []string{`"img"`, "inputs are: x"}},
		{"bad shape syntax", []string{"bench", "--shape", "x", model}, 2, []string{"NAME=D1,D2"}},
		{"bad shape number", []string{"bench", "--shape", "x=1,a", model}, 2, []string{`"a"`}},
		{"bad value", []string{"bench", "--value", "sr=fast", model}, 2, []string{"not a number"}},
		{"bad runs", []string{"bench", "--runs", "abc", model}, 2, []string{"-runs"}},
		{"negative runs", []string{"bench", "--runs", "-1", model}, 2, []string{"--runs must be 1 or more"}},
		{"auto runs bad percentile", []string{"bench", "--runs", "auto", "--auto-percentile", "p100", model}, 2, []string{`--auto-percentile "p100"`}},
		{"auto runs bad width", []string{"bench", "--runs", "auto", "--auto-width", "-5%", model}, 2, []string{`--auto-width "-5%"`}},
		{"bad opt level", []string{"bench", "--opt-level", "max", model}, 2, []string{`--opt-level "max"`, "extended"}},
		{"bad execution mode", []string{"bench", "--execution-mode", "async", model}, 2, []string{`--execution-mode "async"`}},
		{"unknown provider", []string{"bench", "--provider", "cpu,gpu", model}, 2, []string{`unknown execution provider "gpu"`, "cuda"}},
		{"provider option without provider", []string{"bench", "--provider-option", "device_id=0", model}, 2, []string{"--provider-option applies to an execution provider other than cpu"}},
		{"bad session config", []string{"bench", "--session-config", "spin", model}, 2, []string{`--session-config "spin": want KEY=VALUE`}},
		// A provider this build lacks is a fact of the machine found at run
		// time, like a missing model: exit 1, not a usage error.
		{"provider not in this build", []string{"bench", "--out", out, "--provider", "openvino", model}, 1, []string{"OpenVINOExecutionProvider is not in this ONNX Runtime build", "available: ", "CPUExecutionProvider"}},
		{"auto runs in server", []string{"bench", "--runs", "auto", "--scenario", "server", "--qps", "5", model}, 2, []string{"--runs auto needs --scenario single-stream or concurrent"}},
		{"unknown flag", []string{"bench", "--frobs", "1", model}, 2, []string{"frobs"}},
		{"two models", []string{"bench", model, model}, 2, []string{"exactly one MODEL"}},
		{"import missing", []string{"import", "--out", out + "1", filepath.Join(dir, "nope.json")}, 1, []string{"nope.json"}},
		{"import truncated", []string{"import", "--out", out + "2", truncated}, 1, []string{"trunc.json", "byte"}},
		{"import empty", []string{"import", "--out", out + "3", emptyProfile}, 1, []string{"empty.json", "empty"}},
		{"import bad start", []string{"import", "--start", "yesterday", truncated}, 2, []string{"RFC 3339"}},
		{"version args", []string{"version", "extra"}, 2, []string{"no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ortel(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			all := stdout + stderr
			for _, c := range tt.contains {
				if !strings.Contains(all, c) {
					t.Errorf("output lacks %q:\n%s", c, all)
				}
			}
			if strings.Contains(all, "panic") || strings.Contains(all, "goroutine ") {
				t.Errorf("output shows a panic:\n%s", all)
			}
		})
	}
}

func TestImportRealProfile(t *testing.T) {
	dir := t.TempDir()
	prof := gunzipTo(t, "../../instrument/profile/testdata/cls_2runs.json.gz",
		filepath.Join(dir, "onnxruntime_profile__2026-11-22_10-31-07.json"))
	out := filepath.Join(dir, "out")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "import", "--model-name", "cls", "--out", out, prof)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "2 runs") {
		t.Errorf("stdout = %s", stdout)
	}
	spans := readSpans(t, filepath.Join(out, "traces.jsonl"))
	traces := map[string]bool{}
	for _, s := range spans {
		if s.Name == "run cls" {
			traces[string(s.TraceId)] = true
		}
	}
	if len(traces) != 2 {
		t.Errorf("run traces = %d, want 2", len(traces))
	}
}

func TestHelpAndVersion(t *testing.T) {
	code, stdout, _ := ortel(t, "help", "bench")
	if code != 0 || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "paddleocr-det") {
		t.Errorf("help bench: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = ortel(t, "bench", "--help")
	if code != 0 || !strings.Contains(stdout, "--profile-runs") {
		t.Errorf("bench --help: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = ortel(t, "version")
	if code != 0 || !strings.Contains(stdout, "ortel ") || !strings.Contains(stdout, "onnxruntime") {
		t.Errorf("version: exit %d\n%s", code, stdout)
	}
}

// TestBenchRunsDefault: with no --runs, bench measures with --runs auto
// under its time cap where one configuration is measured, and 100 runs
// where what is measured takes a number (the server scenario); --duration alone
// measures for that long.
func TestBenchRunsDefault(t *testing.T) {
	model := chainModel(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	tests := []struct {
		name  string
		args  []string
		check func(r *report.Report) string
	}{
		// A wide target keeps the run short: the cap is what is checked.
		{"auto under the cap", []string{"--auto-width", "50%"}, func(r *report.Report) string {
			if a := r.Config.AutoRuns; a == nil || a.LimitS != bench.DefaultAutoLimit.Seconds() || a.Percentile != 99 || a.Runs != r.Latency.Count {
				return fmt.Sprintf("auto runs %+v, want p99 under the %s cap", a, bench.DefaultAutoLimit)
			}
			return ""
		}},
		{"the server scenario", []string{"--scenario", "server", "--qps", "400"}, func(r *report.Report) string {
			if r.Config.AutoRuns != nil || r.Load == nil || r.Load.Requests != bench.DefaultRuns {
				return fmt.Sprintf("auto %+v, load %+v: want %d requests", r.Config.AutoRuns, r.Load, bench.DefaultRuns)
			}
			return ""
		}},
		{"a duration", []string{"--duration", "300ms"}, func(r *report.Report) string {
			if r.Config.AutoRuns != nil || r.Config.DurationS != 0.3 {
				return fmt.Sprintf("auto %+v, duration %g: want 300ms measured", r.Config.AutoRuns, r.Config.DurationS)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"bench", model, "--warmup", "1", "--profile-runs", "0", "--no-hardware", "--quiet", "--out", out}, tt.args...)
			if code, stdout, stderr := ortel(t, args...); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			r, err := report.Read(filepath.Join(out, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if msg := tt.check(r); msg != "" {
				t.Error(msg)
			}
		})
	}
}
