// Package procfstest holds test helpers for the host receivers: copying a
// fixture tree somewhere writable, rewriting its files in place between
// collections, and collecting through an SDK ManualReader. Only tests
// import it (it uses the OpenTelemetry SDK, which receivers never do).
package procfstest

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// CopyTree copies the fixture tree src (files, folders and symbolic links)
// into a new temporary folder and returns that folder.
func CopyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
	if err != nil {
		t.Fatalf("copy fixture %s: %v", src, err)
	}
	return dst
}

// Rewrite replaces the content of root/rel in place (same inode, as the
// kernel regenerates a /proc file), so a receiver holding it open sees the
// new content on its next read. Content comes from the file from/rel.
func Rewrite(t testing.TB, root, rel, from string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(from, rel))
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, root, rel, string(b))
}

// WriteFile writes content to root/rel in place, creating it if needed.
func WriteFile(t testing.TB, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// NewProvider returns a MeterProvider with a ManualReader, shut down when
// the test ends.
func NewProvider(t testing.TB) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp, r
}

// Collect collects once and returns every metric by name, with the error
// the callbacks returned.
func Collect(t testing.TB, r *sdkmetric.ManualReader) (map[string]metricdata.Metrics, error) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	err := r.Collect(context.Background(), &rm)
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if _, dup := out[m.Name]; dup {
				t.Errorf("metric %s appears twice", m.Name)
			}
			out[m.Name] = m
		}
	}
	return out, err
}

// Observer is a metric.Observer that only counts observations, to measure
// a callback's own cost and allocations without the SDK's.
type Observer struct {
	embedded.Observer
	N int
}

// ObserveFloat64 counts one observation.
func (o *Observer) ObserveFloat64(metric.Float64Observable, float64, ...metric.ObserveOption) { o.N++ }

// ObserveInt64 counts one observation.
func (o *Observer) ObserveInt64(metric.Int64Observable, int64, ...metric.ObserveOption) { o.N++ }
