package cpu

import (
	"context"
	"errors"
	"time"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Times is cumulative CPU time by mode, in seconds, as the semconv cpu.mode
// values name them. Interrupt is irq plus softirq; guest time is inside
// User and Nice, as the kernel counts it.
type Times struct {
	User, Nice, System, Idle, IOWait, Interrupt, Steal float64
}

// Total returns the sum of every mode.
func (t Times) Total() float64 {
	return t.User + t.Nice + t.System + t.Idle + t.IOWait + t.Interrupt + t.Steal
}

// Busy returns the time spent working: every mode but Idle and IOWait.
func (t Times) Busy() float64 { return t.Total() - t.Idle - t.IOWait }

// Snapshot is one reading of the host's CPUs, independent of the metric
// callback, for tools that sample the machine themselves (ortel bench).
type Snapshot struct {
	Time        time.Time
	Total       Times   // all CPUs together
	PerCPU      []Times // by logical number; zero for a CPU not online
	LogicalCPUs int     // online logical CPUs

	ContextSwitches uint64 // since boot; 0 when unknown (not Linux)
	Interrupts      uint64 // since boot; 0 when unknown (not Linux)

	Load    [3]float64 // 1, 5 and 15 minute load averages
	HasLoad bool       // whether Load was read
}

// UtilizationSince returns the busy fraction of all CPUs between prev and
// s: (Δtotal − Δidle − Δiowait) / Δtotal, from 0 to 1. It returns false when
// no CPU time passed in between (the same tick, or prev is empty).
func (s Snapshot) UtilizationSince(prev Snapshot) (float64, bool) {
	total := s.Total.Total() - prev.Total.Total()
	if prev.Time.IsZero() || total <= 0 {
		return 0, false
	}
	busy := s.Total.Busy() - prev.Total.Busy()
	return min(max(busy/total, 0), 1), true
}

// Snapshot reads the CPU statistics now. It does not disturb the deltas the
// metric callback computes utilization from. It fails when no CPU time can
// be read or after Shutdown.
func (r *Receiver) Snapshot() (Snapshot, error) {
	r.cb.Lock()
	defer r.cb.Unlock()
	if r.cb.Down() {
		return Snapshot{}, errShutdown
	}
	var fail procfs.Failures
	w := want{perCPU: true, ctxt: true, intr: true, load: true}
	if !r.src.read(context.Background(), &r.snap, w, &fail) {
		return Snapshot{}, errors.Join(errors.New("cpu: snapshot: no CPU time could be read"), fail.Err())
	}
	hz := r.src.hz()
	s := &r.snap
	out := Snapshot{
		Time:            time.Now(),
		Total:           s.total.times(hz),
		LogicalCPUs:     s.online,
		ContextSwitches: s.ctxt,
		Interrupts:      s.intr,
		Load:            s.load,
		HasLoad:         s.loadOK,
		PerCPU:          make([]Times, len(s.cpus)),
	}
	for n := range s.cpus {
		if s.cpus[n].ok {
			out.PerCPU[n] = s.cpus[n].times(hz)
		}
	}
	if !s.total.ok { // a source without an all-CPU line: add them up
		for _, t := range out.PerCPU {
			out.Total = Times{
				User: out.Total.User + t.User, Nice: out.Total.Nice + t.Nice, System: out.Total.System + t.System,
				Idle: out.Total.Idle + t.Idle, IOWait: out.Total.IOWait + t.IOWait,
				Interrupt: out.Total.Interrupt + t.Interrupt, Steal: out.Total.Steal + t.Steal,
			}
		}
	}
	if !s.ctxtOK {
		out.ContextSwitches = 0
	}
	if !s.intrOK {
		out.Interrupts = 0
	}
	return out, nil
}

var errShutdown = errors.New("cpu: snapshot after Shutdown")

func (c *cpuTicks) times(hz float64) Times {
	return Times{
		User: float64(c.t[modeUser]) / hz, Nice: float64(c.t[modeNice]) / hz,
		System: float64(c.t[modeSystem]) / hz, Idle: float64(c.t[modeIdle]) / hz,
		IOWait: float64(c.t[modeIOWait]) / hz, Interrupt: float64(c.t[modeInterrupt]) / hz,
		Steal: float64(c.t[modeSteal]) / hz,
	}
}
