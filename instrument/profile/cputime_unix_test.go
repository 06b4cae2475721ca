//go:build unix

package profile

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system) the process used so far, or
// 0 where it cannot be read. Benchmarks divide by it rather than by wall time
// too, so that their ratio holds on a machine busy with other work.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
