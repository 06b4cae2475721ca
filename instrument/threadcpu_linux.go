package instrument

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// threadClock measures the CPU time of the calling goroutine's work: it
// locks the goroutine to its thread and reads the thread's CPU clock. stop
// returns the CPU time used since and unlocks the thread. Where the clock
// cannot be read it measures wall time, which is never less.
func threadClock() (stop func() time.Duration) {
	runtime.LockOSThread()
	t0, ok := threadCPU()
	w0 := time.Now()
	return func() time.Duration {
		defer runtime.UnlockOSThread()
		if t1, ok1 := threadCPU(); ok && ok1 {
			return t1 - t0
		}
		return time.Since(w0)
	}
}

func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
