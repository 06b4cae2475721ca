//go:build !linux

package memory

import (
	"errors"
	"testing"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestGopsutil reads this machine through gopsutil: the receiver either
// works and reports something, or says it is unsupported.
func TestGopsutil(t *testing.T) {
	mp, reader := procfstest.NewProvider(t)
	r, err := New(WithMeterProvider(mp))
	if errors.Is(err, receivers.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(t.Context())
	got, _ := procfstest.Collect(t, reader)
	if len(got) == 0 {
		t.Error("no metrics")
	}
	if _, err := r.Snapshot(); err != nil {
		t.Error(err)
	}
}
