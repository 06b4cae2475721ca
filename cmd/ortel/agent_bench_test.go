package main

import (
	"context"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

// BenchmarkAgentStartup measures the agent's start path (budget ≤ 50 ms,
// docs/ARCHITECTURE.md, "Budgets"): telemetry setup with resource
// detection, then every hardware receiver opened and registered, NVML's
// initialization left in the background. ns/op is one start; the shutdown is not timed.
func BenchmarkAgentStartup(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "bench", OutputDir: dir, MetricInterval: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		set := hardware.Open(ctx, hardware.Config{MeterProvider: tel.MeterProvider})
		b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "startup-ms")
		b.StopTimer()
		set.Shutdown(ctx)
		tel.Shutdown(ctx)
		b.StartTimer()
	}
}
