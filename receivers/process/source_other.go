//go:build !linux

package process

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// psSource reaches processes through gopsutil on systems without Linux's
// /proc. The number of CPUs a process may use is runtime.NumCPU there.
type psSource struct{}

func newSource(_ config) (source, error) {
	if _, err := process.NewProcess(int32(os.Getpid())); err != nil {
		return nil, receivers.Unsupported("process", "cannot read processes on "+runtime.GOOS, err)
	}
	return psSource{}, nil
}

func (psSource) self() int { return os.Getpid() }

func (psSource) watch(pid int, _ want) (handle, error) {
	if pid > math.MaxInt32 {
		return nil, fmt.Errorf("process: cannot watch pid %d: not a process id", pid)
	}
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		return nil, fmt.Errorf("process: cannot watch pid %d: %w", pid, err)
	}
	return &psHandle{p: p, pid: pid}, nil
}

type psHandle struct {
	p   *process.Process
	pid int
}

func (h *psHandle) close() error { return nil }

func (h *psHandle) failed(fail *procfs.Failures, id int, what string, err error) {
	if fail.First(id) {
		fail.Report(fmt.Errorf("process: pid %d: %s: %w", h.pid, what, err))
	}
}

func (h *psHandle) read(ctx context.Context, s *sample, w want, fail *procfs.Failures, base int) (exited bool) {
	*s = sample{}
	if running, err := h.p.IsRunningWithContext(ctx); err == nil && !running || errors.Is(err, process.ErrorProcessNotRunning) {
		return true
	}
	if t, err := h.p.TimesWithContext(ctx); err != nil {
		h.failed(fail, base+failStat, "CPU times", err)
	} else {
		fail.OK(base + failStat)
		s.user, s.system, s.has = t.User, t.System, s.has|hasTimes
	}
	if m, err := h.p.MemoryInfoWithContext(ctx); err != nil {
		h.failed(fail, base+failStatFormat, "memory", err)
	} else {
		fail.OK(base + failStatFormat)
		s.rss, s.virtual, s.has = m.RSS, m.VMS, s.has|hasMemory
		if m.HWM > 0 {
			s.peakRSS, s.has = m.HWM, s.has|hasPeakRSS
		}
	}
	if n, err := h.p.NumThreadsWithContext(ctx); err == nil {
		s.threads, s.has = int64(n), s.has|hasThreads
	}
	if f, err := h.p.PageFaultsWithContext(ctx); err == nil {
		s.minflt, s.majflt, s.has = f.MinorFaults, f.MajorFaults, s.has|hasFaults
	}
	if w.status {
		if c, err := h.p.NumCtxSwitchesWithContext(ctx); err != nil {
			h.failed(fail, base+failStatus, "context switches", err)
		} else {
			fail.OK(base + failStatus)
			s.voluntary, s.involuntary, s.has = uint64(max(c.Voluntary, 0)), uint64(max(c.Involuntary, 0)), s.has|hasCtxt
		}
	}
	if w.io {
		if io, err := h.p.IOCountersWithContext(ctx); err != nil {
			h.failed(fail, base+failIO, "disk I/O", err)
		} else {
			fail.OK(base + failIO)
			s.readBytes, s.writeBytes = io.ReadBytes, io.WriteBytes
			if runtime.GOOS == "darwin" {
				s.readBytes, s.writeBytes = io.DiskReadBytes, io.DiskWriteBytes
			}
			s.has |= hasIO
		}
	}
	if w.fds {
		if n, err := h.p.NumFDsWithContext(ctx); err != nil {
			h.failed(fail, base+failFD, "file descriptors", err)
		} else {
			fail.OK(base + failFD)
			s.fds, s.has = int64(n), s.has|hasFDs
		}
	}
	return false
}
