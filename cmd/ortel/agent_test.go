package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"

	"github.com/ortel-dev/ortel/internal/otlpjson"
)

func TestAgentExportsHardwareMetrics(t *testing.T) {
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "agent", "--interval", "100ms", "--duration", "450ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"started in", "collecting every 100ms", "not available: rapl", "metric exports (0 failed)", "peak RSS"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	f, err := os.Open(filepath.Join(out, "metrics.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exports := 0
	seen := map[string]bool{}
	err = otlpjson.ReadMetrics(f, func(req *colmetricspb.ExportMetricsServiceRequest) error {
		exports++
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					seen[m.Name] = true
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if exports < 3 {
		t.Errorf("%d exports in 450ms at 100ms, want at least 3", exports)
	}
	want := []string{"system.cpu.time", "system.cpu.utilization", "system.memory.usage", "process.cpu.time", "process.memory.usage"}
	if !strings.Contains(stderr, "not available: perf (software events)") {
		want = append(want, "ortel.perf.page_faults")
	}
	for _, name := range want {
		if !seen[name] {
			t.Errorf("agent did not export %s", name)
		}
	}
	for name := range seen {
		if strings.HasPrefix(name, "hw.") {
			t.Errorf("agent exported %s on a machine without that hardware: readings that do not exist must not appear", name)
		}
	}
}

func TestAgentBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"agent", "--interval", "1ms"},
		{"agent", "--pid", "abc"},
		{"agent", "--pid", "-4"},
		{"agent", "--duration", "-1s"},
		{"agent", "extra"},
	} {
		if code, _, _ := ortel(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestDoctorListsEverySource(t *testing.T) {
	code, stdout, stderr := ortel(t, "doctor", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var d doctorReport
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range d.Sources {
		got[s.Source] = true
		if !s.Available && s.Reason == "" {
			t.Errorf("%s unavailable without a reason", s.Source)
		}
	}
	for _, want := range []string{"cpu", "memory", "process", "perf (hardware counters)", "perf (software events)", "rapl", "thermal", "nvml"} {
		if !got[want] {
			t.Errorf("doctor does not list %s", want)
		}
	}
	if len(d.OTLP) == 0 || len(d.Models) != 5 {
		t.Errorf("otlp %v, models %d", d.OTLP, len(d.Models))
	}
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20s3cret")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example:4317")
	_, text, _ := ortel(t, "doctor")
	if strings.Contains(text, "s3cret") {
		t.Error("doctor printed an OTLP header value")
	}
	if !strings.Contains(text, "collector.example:4317") || !strings.Contains(text, "Hardware sources") {
		t.Errorf("doctor text:\n%s", text)
	}
}

// TestCommandsPrintTelemetryWarnings: a bad OTEL_* value is reported once by
// every command that exports, and the default is used.
func TestCommandsPrintTelemetryWarnings(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")
	code, _, stderr := ortel(t, "agent", "--duration", "10ms", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "ortel agent: warning:"); n != 1 || !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_TIMEOUT") {
		t.Errorf("want one warning naming OTEL_EXPORTER_OTLP_TIMEOUT, got %d:\n%s", n, stderr)
	}
}
