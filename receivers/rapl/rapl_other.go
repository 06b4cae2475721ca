//go:build !linux

package rapl

import (
	"context"
	"runtime"

	"github.com/ortel-dev/ortel/receivers"
)

// opener opens a file read-only and returns its descriptor.
type opener func(path string) (int, error)

// Receiver observes the energy counters of the RAPL powercap zones. On
// this platform there are none.
type Receiver struct{}

// New returns an error matching receivers.ErrUnsupported: RAPL zones are
// read from Linux's powercap interface.
func New(opts ...Option) (*Receiver, error) {
	_ = newConfig(opts)
	return nil, receivers.Unsupported("rapl", "RAPL energy counters are read from Linux powercap, and this is "+runtime.GOOS, nil)
}

// Zones returns nothing on this platform.
func (r *Receiver) Zones() []Zone { return nil }

// Snapshot returns nothing on this platform.
func (r *Receiver) Snapshot() ([]Energy, error) { return nil, nil }

// Shutdown does nothing on this platform.
func (r *Receiver) Shutdown(context.Context) error { return nil }
