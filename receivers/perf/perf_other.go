//go:build !linux

package perf

import (
	"runtime"

	"github.com/ortel-dev/ortel/receivers"
)

// eventOpener stands for perf_event_open(2), which only Linux has.
type eventOpener func()

// New returns an error matching receivers.ErrUnsupported: perf events are
// a Linux interface.
func New(opts ...Option) (*Receiver, error) {
	_ = newConfig(opts)
	return nil, receivers.Unsupported("perf", "perf events are a Linux interface, and this is "+runtime.GOOS, nil)
}
