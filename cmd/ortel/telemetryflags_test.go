package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestBenchRunSpans: with traces going to files, a span per run only on
// --run-spans; by default the profiled runs' spans only.
func TestBenchRunSpans(t *testing.T) {
	model := chainModel(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	for _, tc := range []struct {
		name  string
		flags []string
		want  int
	}{
		{"default: the profiled runs", nil, 2},
		// first run + 2 warm-up + 10 measured + 2 profiled
		{"--run-spans: every run", []string{"--run-spans"}, 15},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"bench", model, "--runs", "10", "--warmup", "2", "--profile-runs", "2", "--out", out, "--quiet", "--model-name", "chain", "--no-hardware"}, tc.flags...)
			if code, stdout, stderr := ortel(t, args...); code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			runs := 0
			for _, s := range readSpans(t, filepath.Join(out, "traces.jsonl")) {
				if s.Name == "run chain" {
					runs++
				}
			}
			if runs != tc.want {
				t.Errorf("run spans in traces.jsonl = %d, want %d", runs, tc.want)
			}
		})
	}
}

// TestNoTelemetry: --no-telemetry writes no telemetry file or spool, and
// bench still writes its report; with an endpoint it is a usage error on
// every command that takes it.
func TestNoTelemetry(t *testing.T) {
	model := chainModel(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	out := t.TempDir()
	code, stdout, stderr := ortel(t, "bench", model, "--runs", "5", "--warmup", "1", "--profile-runs", "1", "--out", out, "--quiet", "--no-hardware", "--no-telemetry")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatalf("no report with --no-telemetry: %v", err)
	}
	if rep.Telemetry.Mode != "disabled" {
		t.Errorf("report telemetry mode = %q, want disabled", rep.Telemetry.Mode)
	}
	for _, name := range []string{"traces.jsonl", "metrics.jsonl", "spool"} {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("--no-telemetry wrote %s", name)
		}
	}
	for _, args := range [][]string{{"bench", model}, {"agent"}, {"attach", "--pid", "1"}} {
		t.Run(args[0], func(t *testing.T) {
			code, _, stderr := ortel(t, append(args, "--no-telemetry", "--otlp-endpoint", "http://127.0.0.1:1")...)
			if code != exitUsage || !strings.Contains(stderr, "--no-telemetry and --otlp-endpoint") {
				t.Errorf("exit %d, want 2 and the contradiction named:\n%s", code, stderr)
			}
		})
	}
}
