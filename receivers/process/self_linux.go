//go:build linux

package process

import (
	"fmt"
	"math/bits"
	"syscall"
	"unsafe"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// readSelf reads this process without /proc/self/status: getrusage(2)
// gives the CPU times (in microseconds rather than ticks), page faults,
// context switches and peak RSS, all summed over the process's threads as
// /proc reports them; sched_getaffinity(2) the CPUs it may run on. The
// memory and thread count still come from /proc/self/stat when wanted.
func (p *procFiles) readSelf(s *sample, w want, fail *procfs.Failures, base int) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		if fail.First(base + failStatus) {
			fail.Report(fmt.Errorf("process: getrusage: %w", err))
		}
	} else {
		fail.OK(base + failStatus)
		s.user = float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6
		s.system = float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
		s.minflt, s.majflt = uint64(ru.Minflt), uint64(ru.Majflt)
		s.voluntary, s.involuntary = uint64(ru.Nvcsw), uint64(ru.Nivcsw)
		s.peakRSS = uint64(ru.Maxrss) * 1024 // KiB on Linux
		s.has |= hasTimes | hasFaults | hasCtxt | hasPeakRSS
	}
	if w.status {
		if n := p.cpus(); n > 0 {
			s.cpus, s.has = n, s.has|hasCPUs
		}
	}
	if w.stat {
		var st sample
		if !p.readStat(&st, fail, base) && st.ok(hasMemory|hasThreads) {
			s.rss, s.virtual, s.threads = st.rss, st.virtual, st.threads
			s.has |= hasMemory | hasThreads
		}
	}
}

// cpus returns the number of CPUs this process may run on, or 0.
func (p *procFiles) cpus() int {
	n, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0,
		uintptr(len(p.affinity)*8), uintptr(unsafe.Pointer(&p.affinity[0])))
	if errno != 0 {
		return 0
	}
	count := 0
	for _, w := range p.affinity[:min(int(n)/8, len(p.affinity))] {
		count += bits.OnesCount64(w)
	}
	return count
}
