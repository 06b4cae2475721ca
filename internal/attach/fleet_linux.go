//go:build linux

package attach

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Fleet attaches the probes to processes as they come and go (what
// `ortel agent --discover --attach` runs): Add attaches a process, Remove
// detaches it, Run turns the probes' events into telemetry until its
// context ends and keeps the duty cycle (WithDutyCycle): every process's
// probes are attached for the first part of each period and removed for
// the rest. The limits (WithLimits) bound the probes per process and per
// node and the runs per second that become spans and points. All of one
// node's processes share one set of loaded programs and one ring buffer.
type Fleet struct {
	t     *Tracer
	cfg   config
	start time.Time

	mu      sync.Mutex
	members map[int]*member // admitted: attached while the window is open
	waiting map[int]*member // refused for the node's probe limit; admitted when room frees
	inUse   int             // probes of the members (attached or not)
	open    bool            // the window is open: the members' probes are on
	// openedAt is when the open window's probes were all on (the poll's
	// time plus the time attaching took): the window lasts dutyOn from
	// there, so the probes are on for the share counts are scaled by.
	openedAt time.Time
	nextOpen time.Time // the next period's start
	closed   bool
	windows  int64 // windows opened
	failed   int64 // attaches that failed in a window (a process exiting meanwhile)
	lastErr  error

	on atomic.Pointer[map[uint32]bool] // the processes whose probes are on now
}

// member is a process a Fleet has admitted.
type member struct {
	target  Target
	offsets []*Offsets
	probes  int
	on      bool
}

// ErrProcessLimit is returned by Fleet.Add for a process whose ONNX
// Runtime libraries need more probes than Limits.ProcessProbes.
var ErrProcessLimit = errors.New("it needs more probes than the limit per process")

// ErrNodeLimit is returned by Fleet.Add when attaching the process would
// pass Limits.NodeProbes: it waits, and is attached when room frees.
var ErrNodeLimit = errors.New("the node's probe limit is reached")

// FleetStats counts what a Fleet did.
type FleetStats struct {
	Stats
	Attached int   // processes whose probes are on now
	Members  int   // processes admitted (probes on during each window)
	Waiting  int   // processes refused for the node's probe limit, waiting for room
	Probes   int   // uprobes attached now
	Windows  int64 // duty-cycle windows opened (1 when always attached)
	Failed   int64 // attaches that failed at a window's start
}

// NewFleet checks that eBPF uprobes can be used here (see Check), loads
// the probes with nothing attached, and returns a Fleet whose first
// window is open.
func NewFleet(c Config) (*Fleet, error) {
	cfg := c.resolve()
	if err := cfg.validateFleet(); err != nil {
		return nil, err
	}
	if st := Check(); !st.Available {
		return nil, fmt.Errorf("eBPF uprobes cannot be used here: %s", st.Reason)
	}
	now := time.Now()
	f := &Fleet{cfg: cfg, t: &Tracer{cfg: cfg}, members: map[int]*member{}, waiting: map[int]*member{},
		open: true, windows: 1, start: now, openedAt: now, nextOpen: now.Add(cfg.duty)}
	f.on.Store(&map[uint32]bool{})
	f.t.onPoll = f.poll
	err := f.t.load(func(e *emitter) {
		e.share = cfg.share()
		e.rate = rateLimit{process: cfg.limits.ProcessEvents, node: cfg.limits.NodeEvents}
		e.attached = func(pid uint32) bool { return (*f.on.Load())[pid] }
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Share is the share of the time the probes are attached (1: always).
func (f *Fleet) Share() float64 { return f.cfg.share() }

// Add admits process pid and, while the window is open, attaches its
// probes. It returns ErrPython (wrapped) for a Python process, an error
// naming the permission for one whose memory map cannot be read,
// ErrProcessLimit past the limit per process, and ErrNodeLimit when the
// node's limit is reached (the process then waits and is attached when
// room frees). Adding a process already admitted does nothing.
func (f *Fleet) Add(pid int) error {
	tg, err := findTarget(filepath.Join(f.cfg.root, "proc"), pid)
	if err != nil {
		return err
	}
	offs, err := resolveTarget(tg)
	if err != nil {
		return err
	}
	m := &member{target: *tg, offsets: offs, probes: len(offs) * probesPerLibrary}
	if m.probes > f.cfg.limits.ProcessProbes {
		return fmt.Errorf("process %d (%s): %w: it maps %d ONNX Runtime libraries, %d probes, and the limit is %d",
			pid, tg.Exe, ErrProcessLimit, len(offs), m.probes, f.cfg.limits.ProcessProbes)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return fmt.Errorf("process %d (%s): the fleet is closed", pid, tg.Exe)
	}
	if _, ok := f.members[pid]; ok {
		return nil
	}
	if f.inUse+m.probes > f.cfg.limits.NodeProbes {
		f.waiting[pid] = m
		return fmt.Errorf("process %d (%s): %w (%d of %d probes in use); it is attached when room frees",
			pid, tg.Exe, ErrNodeLimit, f.inUse, f.cfg.limits.NodeProbes)
	}
	return f.admitLocked(pid, m)
}

// admitLocked makes m a member and attaches it while the window is open.
// f.mu is held.
func (f *Fleet) admitLocked(pid int, m *member) error {
	if f.open {
		if err := f.attachLocked(pid, m); err != nil {
			return err
		}
	}
	f.members[pid] = m
	f.inUse += m.probes
	return nil
}

// Remove detaches process pid (it exited, or no longer maps ONNX
// Runtime) and forgets it; a process that waits for room is forgotten.
func (f *Fleet) Remove(pid int) error {
	f.mu.Lock()
	m := f.members[pid]
	delete(f.waiting, pid)
	var err error
	if m != nil && !f.closed {
		err = f.detachLocked(pid, m)
		delete(f.members, pid)
		f.inUse -= m.probes
		f.admitWaitingLocked()
	}
	f.mu.Unlock()
	if m != nil {
		f.t.emit.forgetProcess(uint32(pid))
	}
	return err
}

// admitWaitingLocked admits the waiting processes that fit, lowest pid
// first. f.mu is held.
func (f *Fleet) admitWaitingLocked() {
	for _, pid := range slices.Sorted(maps.Keys(f.waiting)) {
		m := f.waiting[pid]
		if f.inUse+m.probes > f.cfg.limits.NodeProbes {
			continue
		}
		delete(f.waiting, pid)
		if err := f.admitLocked(pid, m); err != nil {
			f.failed++
			f.lastErr = err
		}
	}
}

func (f *Fleet) attachLocked(pid int, m *member) error {
	for _, o := range m.offsets {
		if err := f.t.probes.attach(o, pid); err != nil {
			f.t.probes.detach(pid)
			return fmt.Errorf("process %d (%s): %w", pid, m.target.Exe, err)
		}
	}
	m.on = true
	f.publishLocked()
	return nil
}

func (f *Fleet) detachLocked(pid int, m *member) error {
	if !m.on {
		return nil
	}
	m.on = false
	err := f.t.probes.detach(pid)
	f.publishLocked()
	return err
}

// publishLocked stores the set of processes whose probes are on, for the
// emitter's callback. f.mu is held.
func (f *Fleet) publishLocked() {
	on := make(map[uint32]bool, len(f.members))
	for pid, m := range f.members {
		if m.on {
			on[uint32(pid)] = true
		}
	}
	f.on.Store(&on)
}

// poll opens or closes the duty cycle's window (Run calls it every poll):
// it opens at each period's start and closes dutyOn after its probes were
// all on.
func (f *Fleet) poll(now time.Time) {
	if f.cfg.duty == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	switch {
	case !f.open && !now.Before(f.nextOpen):
		began := time.Now()
		f.open = true
		f.windows++
		f.admitWaitingLocked()
		f.switchLocked(true)
		f.openedAt = now.Add(time.Since(began))
		f.nextOpen = f.start.Add((now.Sub(f.start)/f.cfg.duty + 1) * f.cfg.duty)
	case f.open && now.Sub(f.openedAt) >= f.cfg.dutyOn:
		f.open = false
		f.switchLocked(false)
	}
}

// switchLocked attaches (on) or detaches every member. f.mu is held.
func (f *Fleet) switchLocked(on bool) {
	for _, pid := range slices.Sorted(maps.Keys(f.members)) {
		m := f.members[pid]
		var err error
		if on {
			err = f.attachLocked(pid, m)
		} else {
			err = f.detachLocked(pid, m)
		}
		if err != nil {
			f.failed++
			f.lastErr = err
		}
	}
}

// Run turns events into spans and metrics and keeps the duty cycle until
// ctx ends, then reads what the probes had already sent.
func (f *Fleet) Run(ctx context.Context) error {
	_, err := f.t.Run(ctx)
	return err
}

// Close detaches every probe and unloads them; safe to call more than
// once.
func (f *Fleet) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for _, m := range f.members {
		m.on = false
	}
	f.publishLocked()
	return f.t.Close()
}

// Stats returns the counts so far.
func (f *Fleet) Stats() FleetStats {
	st := FleetStats{Stats: f.t.Stats()}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.members {
		if m.on {
			st.Attached++
		}
	}
	st.Members, st.Waiting, st.Windows, st.Failed = len(f.members), len(f.waiting), f.windows, f.failed
	if !f.t.detached.Load() {
		st.Probes = f.t.probes.count()
	}
	return st
}

// ProbesOn returns how many uprobes are attached to process pid now.
func (f *Fleet) ProbesOn(pid int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.t.detached.Load() {
		return 0
	}
	return len(f.t.probes.links[pid])
}

// LastError is the last error of an attach at a window's start, or nil.
func (f *Fleet) LastError() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastErr
}
