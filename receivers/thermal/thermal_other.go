//go:build !linux

package thermal

import (
	"context"
	"runtime"

	"github.com/ortel-dev/ortel/receivers"
)

// opener opens a file read-only and returns its descriptor.
type opener func(path string) (int, error)

// Receiver observes temperature sensors. On this platform there are none
// it can read.
type Receiver struct{}

// New returns an error matching receivers.ErrUnsupported: sensors are read
// from Linux's thermal and hwmon interfaces.
func New(opts ...Option) (*Receiver, error) {
	_ = newConfig(opts)
	return nil, receivers.Unsupported("thermal", "temperatures are read from Linux thermal zones and hwmon, and this is "+runtime.GOOS, nil)
}

// Sensors returns nothing on this platform.
func (r *Receiver) Sensors() []Sensor { return nil }

// Snapshot returns nothing on this platform.
func (r *Receiver) Snapshot() ([]Reading, error) { return nil, nil }

// Shutdown does nothing on this platform.
func (r *Receiver) Shutdown(context.Context) error { return nil }
