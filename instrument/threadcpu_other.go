//go:build !linux

package instrument

import "time"

// threadClock measures the wall time of the calling goroutine's work (no
// thread CPU clock is read on this system); stop returns it.
func threadClock() (stop func() time.Duration) {
	w0 := time.Now()
	return func() time.Duration { return time.Since(w0) }
}
