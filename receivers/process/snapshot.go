package process

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Process is one reading of one process. A field the system does not
// report is zero (PeakRSS where the peak is unknown).
type Process struct {
	PID  int
	Time time.Time

	UserTime, SystemTime float64 // CPU seconds since the process started
	CPUs                 int     // CPUs the process may run on (its affinity; else runtime.NumCPU)

	RSS           uint64 // resident memory, bytes
	PeakRSS       uint64 // the highest RSS so far (VmHWM), bytes; 0 when unknown
	VirtualMemory uint64 // bytes
	Threads       int64
}

// CPUUtilizationSince returns the CPU time p gained since prev (the same
// process, read earlier) divided by the wall time in between and by the
// CPUs the process may run on: 1 is every allowed CPU busy all the time.
// It returns false when no time passed or prev is another process.
func (p Process) CPUUtilizationSince(prev Process) (float64, bool) {
	elapsed := p.Time.Sub(prev.Time).Seconds()
	if prev.PID != p.PID || prev.Time.IsZero() || elapsed <= 0 || p.CPUs <= 0 {
		return 0, false
	}
	cpu := (p.UserTime + p.SystemTime) - (prev.UserTime + prev.SystemTime)
	return max(cpu, 0) / elapsed / float64(p.CPUs), true
}

// Snapshot is one reading of the watched processes, independent of the
// metric callback, for tools that sample processes themselves (ortel bench
// reads its own peak RSS and CPU use from it).
type Snapshot struct {
	Time      time.Time
	Processes []Process // the watched processes still running, in WithPIDs order
}

// Process returns the reading of process pid.
func (s Snapshot) Process(pid int) (Process, bool) {
	for _, p := range s.Processes {
		if p.PID == pid {
			return p, true
		}
	}
	return Process{}, false
}

var errShutdown = errors.New("process: snapshot after Shutdown")

// Snapshot reads the watched processes now. A process that has exited is
// left out (and its exit is reported once by the next collection). It
// fails after Shutdown, or when none of the processes could be read.
func (r *Receiver) Snapshot() (Snapshot, error) {
	r.cb.Lock()
	defer r.cb.Unlock()
	if r.cb.Down() {
		return Snapshot{}, errShutdown
	}
	now := r.now()
	out := Snapshot{Time: now}
	w := want{stat: true, status: true}
	var fail procfs.Failures // the callback reports failures, not Snapshot
	for _, p := range r.procs {
		// Read into p.cur and put the callback's sample back.
		cur := p.cur
		ok := readProc(context.Background(), p, w, &fail)
		s := p.cur
		p.cur = cur
		if !ok || !s.ok(hasTimes|hasMemory|hasThreads) {
			continue
		}
		q := Process{
			PID: p.pid, Time: now,
			UserTime: s.user, SystemTime: s.system,
			RSS: s.rss, VirtualMemory: s.virtual, Threads: s.threads,
			CPUs: runtime.NumCPU(),
		}
		if s.ok(hasCPUs) && s.cpus > 0 {
			q.CPUs = s.cpus
		}
		if s.ok(hasPeakRSS) {
			q.PeakRSS = s.peakRSS
		}
		out.Processes = append(out.Processes, q)
	}
	if len(out.Processes) == 0 {
		return Snapshot{}, errors.New("process: snapshot: none of the watched processes could be read")
	}
	return out, nil
}
