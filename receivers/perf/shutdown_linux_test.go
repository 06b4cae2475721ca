package perf

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestShutdownDuringCollect: Shutdown while collections run must not
// deadlock (the SDK holds its lock while the callback runs).
func TestShutdownDuringCollect(t *testing.T) {
	procfstest.ShutdownDuringCollect(t, func(t *testing.T, mp metric.MeterProvider) func(context.Context) error {
		return newReal(t, WithMeterProvider(mp)).Shutdown
	})
}
