package telemetry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
)

// TestFileRotationIsBounded: metrics written far past the bound leave at
// most the live file and Backups rotated ones, each no larger than the
// bound plus one export, every line still valid OTLP/JSON.
func TestFileRotationIsBounded(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	ctx := testContext(t)
	const maxBytes = 2048
	tel, err := Setup(ctx, Config{OutputDir: dir, Rotation: Rotation{MaxBytes: maxBytes, Backups: 2}, MetricInterval: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tel.MeterProvider.Meter("test").Int64Counter("test.runs", metric.WithUnit("{run}"))
	if err != nil {
		t.Fatal(err)
	}
	var line int64
	for i := range 40 {
		c.Add(ctx, int64(i))
		if err := tel.MeterProvider.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
		if line == 0 {
			st, err := os.Stat(filepath.Join(dir, MetricsFileName))
			if err != nil {
				t.Fatal(err)
			}
			line = st.Size()
		}
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rotated, _ := filepath.Glob(filepath.Join(dir, "metrics-*.jsonl"))
	if len(rotated) != 2 {
		t.Errorf("rotated files = %v, want the 2 newest kept (40 exports of %d bytes, bound %d)", rotated, line, maxBytes)
	}
	total := 0
	for _, p := range append(rotated, filepath.Join(dir, MetricsFileName)) {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > maxBytes+line {
			t.Errorf("%s is %d bytes, over the bound %d plus one export", p, st.Size(), maxBytes)
		}
		b, _ := os.ReadFile(p)
		n := strings.Count(string(b), "\n")
		total += n
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if !strings.HasPrefix(l, `{"resourceMetrics"`) {
				t.Errorf("%s holds a line that is not an OTLP/JSON request: %.60s", p, l)
			}
		}
	}
	if total >= 40 {
		t.Errorf("%d lines kept of 40: nothing was pruned", total)
	}
	r := tel.Resolved
	if d := strings.Join(r.Describe(), "\n"); !strings.Contains(d, "files: rotated at 2048 bytes, keeping the 2 newest") {
		t.Errorf("Describe does not state the rotation:\n%s", d)
	}
}
