//go:build !linux

package memory

import (
	"testing"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestGopsutil reads this machine through gopsutil: the receiver either
// works and reports something, or says it is unsupported.
func TestGopsutil(t *testing.T) {
	procfstest.ReadsThisMachine(t,
		func(mp metric.MeterProvider) (*Receiver, error) { return New(WithMeterProvider(mp)) },
		func(r *Receiver) error { _, err := r.Snapshot(); return err })
}
