package perf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// eventOpener is perf_event_open(2).
type eventOpener func(attr *unix.PerfEventAttr, pid, cpu, groupFd, flags int) (int, error)

// perfEvents gives the perf_event_open type and config of each event.
var perfEvents = [numEvents]struct {
	typ    uint32
	config uint64
}{
	evInstructions:    {unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_INSTRUCTIONS},
	evCycles:          {unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES},
	evCacheReferences: {unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_REFERENCES},
	evCacheMisses:     {unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CACHE_MISSES},
	evBranchMisses:    {unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_BRANCH_MISSES},
	evContextSwitches: {unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CONTEXT_SWITCHES},
	evPageFaults:      {unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_PAGE_FAULTS},
	evCPUMigrations:   {unix.PERF_TYPE_SOFTWARE, unix.PERF_COUNT_SW_CPU_MIGRATIONS},
}

// attr builds the perf_event_attr of event e. Every event is its own file
// descriptor (no group), counts one thread on any CPU, and is inherited by
// the threads that thread starts later (inherit). Reads return the count
// with the times enabled and running, to scale for multiplexing. Groups
// would keep instructions and cycles on the PMU together, but a group
// cannot be read with inherit before Linux 6.x; separate events work on
// every kernel, at the cost of scaling each on its own.
func attr(e int, excludeKernel bool) *unix.PerfEventAttr {
	a := &unix.PerfEventAttr{
		Type:        perfEvents[e].typ,
		Config:      perfEvents[e].config,
		Size:        uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Read_format: unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING,
		Bits:        unix.PerfBitInherit | unix.PerfBitExcludeHv,
	}
	if excludeKernel {
		a.Bits |= unix.PerfBitExcludeKernel
	}
	return a
}

// fdCounter is an open perf event.
type fdCounter int

func (c fdCounter) read() (reading, error) {
	var b [24]byte
	for {
		n, err := unix.Read(int(c), b[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return reading{}, err
		}
		if n != len(b) {
			return reading{}, fmt.Errorf("short read of %d bytes", n)
		}
		return reading{
			value:   binary.NativeEndian.Uint64(b[0:]),
			enabled: binary.NativeEndian.Uint64(b[8:]),
			running: binary.NativeEndian.Uint64(b[16:]),
		}, nil
	}
}

func (c fdCounter) close() error { return unix.Close(int(c)) }

// New opens the perf events of the processes (this process by default,
// see WithPIDs) and registers the metrics that are on. Each part — the
// hardware counters and the software events — is probed on its own: in a
// virtual machine without a PMU the hardware part is unsupported and the
// software part still counts. Parts() says how each fared. New returns an
// error matching receivers.ErrUnsupported, and registers nothing, only
// when neither part can count anything (perf_event_paranoid 3 and no
// CAP_PERFMON, perf_event_open blocked by seccomp, a kernel without perf
// events). A process that does not exist is an error naming it.
func New(opts ...Option) (*Receiver, error) {
	cfg := newConfig(opts)
	sel, err := cfg.Resolve("perf", Metrics())
	if err != nil {
		return nil, err
	}
	if cfg.open == nil {
		cfg.open = unix.PerfEventOpen
	}
	pids := cfg.pids
	if len(pids) == 0 {
		pids = []int{os.Getpid()}
	}

	o := &opener{open: cfg.open, paranoid: paranoid(cfg.Root)}
	r := &Receiver{}
	tids := make([][]int, len(pids))
	for i, pid := range pids {
		if tids[i], err = threads(cfg.Root, pid); err != nil {
			return nil, err
		}
		r.targets = append(r.targets, newTarget(pid))
	}
	want := needed(sel)
	for _, hardware := range []bool{true, false} {
		r.parts = append(r.parts, o.openPart(r, tids, hardware, want))
	}
	if hw, sw := r.parts[0].Err, r.parts[1].Err; hw != nil && sw != nil {
		r.closeLocked()
		reason, cause := procfs.Summarize([]error{hw, sw}, "neither hardware counters nor software events can be opened")
		return nil, receivers.Unsupported("perf", reason, cause)
	}
	if err := r.register(cfg.MeterProvider, sel); err != nil {
		r.closeLocked()
		return nil, err
	}
	return r, nil
}

// threads lists the threads of a process.
func threads(root string, pid int) ([]int, error) {
	dir := filepath.Join(root, "proc", strconv.Itoa(pid), "task")
	list, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("perf: process %d: no such process (%s does not exist)", pid, dir)
		}
		return nil, fmt.Errorf("perf: process %d: list its threads: %w", pid, err)
	}
	var tids []int
	for _, e := range list {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	if len(tids) == 0 {
		return nil, fmt.Errorf("perf: process %d: no threads in %s", pid, dir)
	}
	return tids, nil
}

// paranoid returns kernel.perf_event_paranoid, "" when it cannot be read.
func paranoid(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "proc", "sys", "kernel", "perf_event_paranoid"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// opener opens events, remembering whether the kernel lets this process
// count kernel-side events.
type opener struct {
	open          eventOpener
	paranoid      string
	excludeKernel bool // learnt from a refusal: count user space only
}

// openPart opens the wanted events of one part for every thread of every
// target.
func (o *opener) openPart(r *Receiver, tids [][]int, hardware bool, want [numEvents]bool) Part {
	part := Part{Name: SoftwarePart}
	if hardware {
		part.Name = HardwarePart
	}
	var failed []error
	for e, info := range events {
		if info.hardware != hardware || !want[e] {
			continue
		}
		if err := o.openEvent(r, tids, e); err != nil {
			cause := err
			if !errors.Is(err, errKernelOnly) {
				cause = os.NewSyscallError("perf_event_open", err)
			}
			failed = append(failed, receivers.Unsupported("perf event "+string(info.event), o.reason(err, hardware), cause))
			continue
		}
		r.counted[e] = true
		part.Events = append(part.Events, info.event)
	}
	part.UserOnly = o.excludeKernel
	if len(part.Events) == 0 && len(failed) > 0 {
		reason, cause := procfs.Summarize(failed, "none of its events can be opened")
		part.Err = receivers.Unsupported("perf ("+part.Name+")", reason, cause)
		return part
	}
	part.Missing = failed
	return part
}

// errKernelOnly is why an event that happens in the kernel is not opened
// when only user space may be counted: it would always read zero.
var errKernelOnly = errors.New("the event happens in the kernel and only user space may be counted")

// openEvent opens event e for every thread of every target. The first
// thread decides: a refusal there is the event's failure. Threads that
// exit meanwhile are skipped.
func (o *opener) openEvent(r *Receiver, tids [][]int, e int) error {
	if o.excludeKernel && events[e].kernel {
		return errKernelOnly
	}
	opened := make([][]counter, len(r.targets))
	closeAll := func() {
		for _, cs := range opened {
			for _, c := range cs {
				c.close()
			}
		}
	}
	first := true
	for ti := range r.targets {
		for _, tid := range tids[ti] {
			fd, err := o.open(attr(e, o.excludeKernel), tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
			if first && !o.excludeKernel && (err == unix.EACCES || err == unix.EPERM) {
				// perf_event_paranoid 2 (the default) lets unprivileged
				// processes count their own user space only.
				fd, err = o.open(attr(e, true), tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
				if err == nil {
					o.excludeKernel = true
					if events[e].kernel {
						unix.Close(fd)
						return errKernelOnly
					}
				}
			}
			if err == unix.ESRCH {
				continue // the thread exited
			}
			if err != nil {
				closeAll()
				return err
			}
			first = false
			opened[ti] = append(opened[ti], fdCounter(fd))
		}
	}
	if first {
		return unix.ESRCH
	}
	for ti, t := range r.targets {
		t.fds[e] = opened[ti]
	}
	return nil
}

// reason says in plain words why perf_event_open refused an event.
func (o *opener) reason(err error, hardware bool) string {
	level := "perf_event_paranoid is " + o.paranoid
	if o.paranoid == "" {
		level = "perf_event_paranoid cannot be read"
	}
	switch {
	case errors.Is(err, errKernelOnly):
		return fmt.Sprintf("it happens inside the kernel, and %s, which lets unprivileged processes count user space only: run as root, grant CAP_PERFMON, or lower kernel.perf_event_paranoid to 1", level)
	case hardware && (err == unix.ENOENT || err == unix.ENODEV):
		return "this CPU exposes no hardware performance counters (no PMU; usual in virtual machines)"
	case hardware && err == unix.EOPNOTSUPP:
		return "the CPU's performance monitoring unit does not count this event"
	case err == unix.ENOENT || err == unix.ENODEV || err == unix.EOPNOTSUPP:
		return "the kernel does not offer this event"
	case err == unix.EACCES:
		return fmt.Sprintf("perf_event_open was refused: %s, which forbids perf events to unprivileged processes: run as root, grant CAP_PERFMON, or lower kernel.perf_event_paranoid to 2", level)
	case err == unix.EPERM:
		return fmt.Sprintf("perf_event_open is not permitted: a seccomp profile blocks it (Docker's default does) or a capability is missing (%s); allow perf_event_open, run as root or grant CAP_PERFMON", level)
	case err == unix.ENOSYS:
		return "this kernel has no perf events (built without CONFIG_PERF_EVENTS)"
	case err == unix.ESRCH:
		return "the process exited"
	case err == unix.EMFILE || err == unix.ENFILE:
		return "too many open files: raise the file descriptor limit (one descriptor per thread and event)"
	}
	return "perf_event_open failed"
}
