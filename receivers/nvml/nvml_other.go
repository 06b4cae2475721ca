//go:build !linux || !cgo

package nvml

import (
	"context"
	"runtime"

	"github.com/ortel-dev/ortel/receivers"
)

// platformConfig is empty: this build cannot load NVML.
type platformConfig struct{}

// Receiver reads NVIDIA GPUs through NVML. This build has none to read.
type Receiver struct{}

// New returns an error matching receivers.ErrUnsupported: NVML is loaded
// through cgo on Linux, and this build is not one.
func New(opts ...Option) (*Receiver, error) {
	_ = newConfig(opts)
	reason := "NVML is read on Linux, and this is " + runtime.GOOS
	if runtime.GOOS == "linux" {
		reason = "this program was built without cgo (CGO_ENABLED=0), which loading NVML needs"
	}
	return nil, receivers.Unsupported("nvml", reason, nil)
}

// Ready returns at once: there is nothing to initialize.
func (r *Receiver) Ready(context.Context) error { return nil }

// Devices returns nothing in this build.
func (r *Receiver) Devices() []Device { return nil }

// Snapshot returns nothing in this build.
func (r *Receiver) Snapshot(context.Context) ([]Sample, error) { return nil, nil }

// Shutdown does nothing in this build.
func (r *Receiver) Shutdown(context.Context) error { return nil }
