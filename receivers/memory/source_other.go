//go:build !linux

package memory

import (
	"context"
	"errors"
	"runtime"

	"github.com/shirou/gopsutil/v4/mem"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// psSource reads memory and swap through gopsutil on systems without
// Linux's /proc. "used" is gopsutil's for that system; buffers and cached
// are reported only where the system has them; paging faults and
// operations are not available.
type psSource struct{}

var errNoVM = errors.New("system.paging.faults and system.paging.operations: not available on " + runtime.GOOS)

func newSource(_ config, _ want) (source, error) {
	if _, err := mem.VirtualMemory(); err != nil {
		return nil, receivers.Unsupported("memory", "cannot read memory statistics on "+runtime.GOOS, err)
	}
	return psSource{}, nil
}

func (psSource) close() error { return nil }

func (psSource) read(ctx context.Context, smp *sample, w want, fail *procfs.Failures) {
	*smp = sample{}
	if vm, err := mem.VirtualMemoryWithContext(ctx); err != nil {
		fail.Fail(failMeminfo, err)
	} else {
		fail.OK(failMeminfo)
		smp.setMem(memTotal, vm.Total)
		smp.setMem(memFree, vm.Free)
		smp.setMem(memUsed, vm.Used)
		switch runtime.GOOS {
		case "freebsd", "openbsd", "netbsd":
			smp.setMem(memBuffers, vm.Buffers)
			smp.setMem(memCached, vm.Cached)
		}
	}
	if sw, err := mem.SwapMemoryWithContext(ctx); err != nil {
		fail.Fail(failVmstat, err)
	} else {
		fail.OK(failVmstat)
		smp.setMem(memSwapTotal, sw.Total)
		smp.setMem(memSwapFree, sw.Free)
	}
	if w.vmstat {
		fail.Fail(failVmstatFormat, errNoVM)
	}
}
