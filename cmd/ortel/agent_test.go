package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/ortel-dev/ortel/internal/models"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// hostRoot builds a host root for ORTEL_HOST_ROOT from the receivers'
// fixtures: /proc from the cpu, memory and process fixtures and, with
// sensors, /sys/class/powercap (a two-socket Xeon's RAPL zones) and
// /sys/class/thermal and /sys/class/hwmon (a server's sensors). The
// receivers' own helpers (receivers/internal/procfs/procfstest) cannot be
// imported from here, hence the small copies below.
func hostRoot(t *testing.T, sensors bool) string {
	t.Helper()
	root := t.TempDir()
	for _, src := range []string{"cpu", "memory", "process"} {
		copyTree(t, filepath.Join("../../receivers", src, "testdata/host"), root)
	}
	if sensors {
		expandTxtar(t, "../../receivers/rapl/testdata/xeon-2s.txtar", root)
		expandTxtar(t, "../../receivers/thermal/testdata/server.txtar", root)
	}
	return root
}

// copyTree copies the files, folders and symbolic links under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// expandTxtar writes the files of a txtar archive ("-- path --" lines)
// under root.
func expandTxtar(t *testing.T, archive, root string) {
	t.Helper()
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*strings.Builder{}
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if l := strings.TrimSuffix(line, "\n"); strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			cur = &strings.Builder{}
			files[strings.TrimSpace(l[3:len(l)-3])] = cur
			continue
		}
		if cur != nil {
			cur.WriteString(line)
		}
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// hostSensorPoints returns the names of the hw.* metrics in an OTLP/JSON
// metrics file whose points come from host sensors (RAPL, thermal zones,
// hwmon): everything but GPU readings (hw.gpu.*, or hw.type "gpu"), which
// NVML adds on a machine with an NVIDIA driver whatever the host root.
func hostSensorPoints(t *testing.T, path string) (names map[string]bool, exports int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names = map[string]bool{}
	err = otlpjson.ReadMetrics(f, func(req *colmetricspb.ExportMetricsServiceRequest) error {
		exports++
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					names[m.Name] = true
					if !strings.HasPrefix(m.Name, "hw.") || strings.HasPrefix(m.Name, "hw.gpu.") {
						continue
					}
					for _, attrs := range pointAttrs(m) {
						gpu := false
						for _, kv := range attrs {
							gpu = gpu || kv.Key == "hw.type" && kv.Value.GetStringValue() == "gpu"
						}
						if !gpu {
							names["host:"+m.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names, exports
}

// pointAttrs returns the attributes of each data point of m.
func pointAttrs(m *metricspb.Metric) [][]*commonpb.KeyValue {
	var out [][]*commonpb.KeyValue
	switch d := m.Data.(type) {
	case *metricspb.Metric_Gauge:
		for _, p := range d.Gauge.DataPoints {
			out = append(out, p.Attributes)
		}
	case *metricspb.Metric_Sum:
		for _, p := range d.Sum.DataPoints {
			out = append(out, p.Attributes)
		}
	case *metricspb.Metric_Histogram:
		for _, p := range d.Histogram.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// TestAgentExportsHardwareMetrics runs the agent on two fixture hosts
// (ORTEL_HOST_ROOT), so the result does not depend on the machine the test
// runs on: one with RAPL and thermal sensors, whose hw.* readings must be
// exported, and one without, where the agent must say why and export no
// host hw.* reading (never zeros for readings that do not exist).
func TestAgentExportsHardwareMetrics(t *testing.T) {
	for _, sensors := range []bool{true, false} {
		name := map[bool]string{true: "with sensors", false: "without sensors"}[sensors]
		t.Run(name, func(t *testing.T) {
			t.Setenv("ORTEL_HOST_ROOT", hostRoot(t, sensors))
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			out := t.TempDir()
			code, stdout, stderr := ortel(t, "agent", "--interval", "100ms", "--duration", "250ms", "--out", out)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			for _, want := range []string{"started in", "collecting every 100ms", "metric exports (0 failed)", "peak RSS"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			seen, exports := hostSensorPoints(t, filepath.Join(out, "metrics.jsonl"))
			if exports < 1 {
				t.Error("no metric export: the final one is always made")
			}
			for _, name := range []string{"system.cpu.time", "system.memory.usage", "process.cpu.time", "process.memory.usage"} {
				if !seen[name] {
					t.Errorf("agent did not export %s", name)
				}
			}
			sensorsOf := []struct{ source, metric string }{{"rapl", "hw.energy"}, {"thermal", "hw.temperature"}}
			for _, s := range sensorsOf {
				off := strings.Contains(stderr, "not available: "+s.source)
				switch {
				case sensors && off:
					t.Errorf("%s is not available on a host root that has it:\n%s", s.source, stderr)
				case sensors && !seen["host:"+s.metric]:
					t.Errorf("agent did not export %s from %s", s.metric, s.source)
				case !sensors && !off:
					t.Errorf("stderr does not say why %s is not available:\n%s", s.source, stderr)
				}
			}
			if !sensors {
				for name := range seen {
					if strings.HasPrefix(name, "host:") {
						t.Errorf("agent exported %s on a host without that hardware: readings that do not exist must not appear", strings.TrimPrefix(name, "host:"))
					}
				}
			}
		})
	}
}

func TestAgentBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"agent", "--interval", "1ms"},
		{"agent", "--pid", "abc"},
		{"agent", "--pid", "-4"},
		{"agent", "--duration", "-1s"},
		{"agent", "extra"},
		{"agent", "--rotate-mb", "-1"},
		{"agent", "--rotate-keep", "0"},
		{"agent", "--discover", "--discover-interval", "1ms"},
		{"agent", "--discover-interval", "1s"}, // without --discover
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
	if len(d.OTLP) == 0 || len(d.Models) != len(models.Catalog) {
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
