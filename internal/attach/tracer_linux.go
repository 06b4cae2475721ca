//go:build linux

package attach

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"
	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sys/unix"
)

// Tracer is a set of attached probes and the loop that turns their events
// into telemetry. Start attaches; Run reads until its context ends or the
// targets exit; Close detaches.
type Tracer struct {
	cfg     config
	targets []Target
	offsets []*Offsets
	probes  *probes
	reader  *ringbuf.Reader
	emit    *emitter

	// onPoll, when set, is called by Run at every poll (a Fleet opens and
	// closes its duty cycle's windows there).
	onPoll func(now time.Time)

	closing   sync.RWMutex // held to close the maps; read to use them from a callback
	detached  atomic.Bool
	lost      atomic.Int64 // the probes' lost count, kept at Close
	closeOnce sync.Once
	closeErr  error
}

// Stats counts what a Tracer saw.
type Stats struct {
	Runs     int64 // Run and RunWithBinding calls that returned
	Errors   int64 // of those, calls that returned an error status
	Sessions int64 // CreateSession and CreateSessionFromArray calls
	Bad      int64 // events dropped as malformed
	// Spans counts the run spans made (every run's, unless sampled).
	Spans int64
	// Shed counts the runs past a Fleet's events/s limits: counted in the
	// run metrics, without their span and histogram point.
	Shed int64
	// Lost counts calls whose event the probes dropped because the ring
	// buffer was full (user space fell 4 MiB behind): their runs are
	// missing from the spans and metrics.
	Lost int64
}

// Start checks that eBPF uprobes can be used here (see Check), finds the
// ONNX Runtime library of each target, resolves its functions and attaches
// the probes. Nothing stays attached when it returns an error.
func Start(c Config) (*Tracer, error) {
	cfg := c.resolve()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg.pids = slices.Clone(cfg.pids)
	slices.Sort(cfg.pids)
	cfg.pids = slices.Compact(cfg.pids) // a process probed twice would count its runs twice
	if st := Check(); !st.Available {
		return nil, fmt.Errorf("eBPF uprobes cannot be used here: %s", st.Reason)
	}
	t := &Tracer{cfg: cfg}
	type site struct {
		o   *Offsets
		pid int
	}
	var sites []site
	for _, pid := range cfg.pids {
		tg, err := findTarget(filepath.Join(cfg.root, "proc"), pid)
		if err != nil {
			return nil, err
		}
		offs, err := resolveTarget(tg)
		if err != nil {
			return nil, err
		}
		for _, o := range offs {
			t.offsets = append(t.offsets, o)
			sites = append(sites, site{o, pid})
		}
		t.targets = append(t.targets, *tg)
	}
	if cfg.lib != "" {
		o, err := Resolve(cfg.lib)
		if err != nil {
			return nil, err
		}
		t.offsets = append(t.offsets, o)
		sites = append(sites, site{o, 0})
	}
	if err := t.load(nil); err != nil {
		return nil, err
	}
	for _, s := range sites {
		if err := t.probes.attach(s.o, s.pid); err != nil {
			t.reader.Close()
			t.probes.close()
			return nil, err
		}
	}
	return t, nil
}

// resolveTarget resolves the functions of every ONNX Runtime library of
// a target.
func resolveTarget(tg *Target) ([]*Offsets, error) {
	var out []*Offsets
	for _, l := range tg.Libraries {
		o, err := Resolve(l.Open)
		if err != nil {
			return nil, fmt.Errorf("process %d (%s): %w", tg.PID, tg.Exe, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// load loads the probes' programs and maps, with nothing attached yet,
// opens their ring buffer and makes the emitter; setup (may be nil)
// completes the emitter before its callback is registered.
func (t *Tracer) load(setup func(*emitter)) error {
	p, err := loadProbes()
	if err != nil {
		return err
	}
	t.probes = p
	t.reader, err = ringbuf.NewReader(p.coll.Maps["ortel_events"])
	if err != nil {
		p.close()
		return fmt.Errorf("open the probes' ring buffer: %w", err)
	}
	root := t.cfg.root
	runs := p.coll.Maps["ortel_runs"]
	t.emit = newEmitter(t.cfg, func(pid uint32) []attribute.KeyValue { return processAttrsAt(root, pid) }, func(e *emitter) {
		e.activeCount = func() map[sessionKey]int64 {
			t.closing.RLock() // Close must not close the map under the read
			defer t.closing.RUnlock()
			if t.detached.Load() {
				return nil
			}
			return inFlight(runs)
		}
		if setup != nil {
			setup(e)
		}
	})
	return nil
}

// Targets returns the processes attached by id (not those of WithLibrary).
func (t *Tracer) Targets() []Target { return append([]Target(nil), t.targets...) }

// Libraries returns the resolved libraries the probes are attached to.
func (t *Tracer) Libraries() []Offsets {
	out := make([]Offsets, len(t.offsets))
	for i, o := range t.offsets {
		out[i] = *o
	}
	return out
}

// Stats returns the counts so far.
func (t *Tracer) Stats() Stats {
	st := Stats{Runs: t.emit.nRuns.Load(), Errors: t.emit.nErrors.Load(),
		Sessions: t.emit.nCreates.Load(), Bad: t.emit.nBad.Load(), Lost: t.lost.Load(),
		Spans: t.emit.nSpans.Load(), Shed: t.emit.nShed.Load()}
	t.closing.RLock()
	defer t.closing.RUnlock()
	if !t.detached.Load() {
		st.Lost = t.probes.lost()
	}
	return st
}

// StopReason says why Run returned.
type StopReason int

// Why Run returns.
const (
	StoppedByContext StopReason = iota // the context ended (signal, duration)
	TargetsExited                      // every process given by id exited
)

// pollInterval is how often Run drains the ring buffer (the probes wake
// it only when the ring fills up) and looks whether the targets live.
const pollInterval = 100 * time.Millisecond

// Run turns events into spans and metrics until ctx ends or, when the
// Tracer was started with process ids, all of them exit. It then reads
// what the probes had already sent, so no finished run is lost.
func (t *Tracer) Run(ctx context.Context) (StopReason, error) {
	alive := map[int]bool{}
	for _, tg := range t.targets {
		alive[tg.PID] = true
	}
	reason := StoppedByContext
	polls := 0
	next := time.Now().Add(pollInterval)
	for ctx.Err() == nil {
		t.reader.SetDeadline(next)
		rec, err := t.reader.Read()
		switch {
		case err == nil:
			t.handle(rec.RawSample)
			continue
		case errors.Is(err, os.ErrDeadlineExceeded):
		case errors.Is(err, ringbuf.ErrClosed):
			return reason, nil
		default:
			return reason, fmt.Errorf("read the probes' ring buffer: %w", err)
		}
		now := time.Now()
		next = now.Add(pollInterval)
		if t.onPoll != nil {
			t.onPoll(now)
		}
		if polls++; polls%10 == 0 {
			t.emit.forgetExited(t.alive)
		}
		if len(alive) > 0 {
			for pid := range alive {
				if !t.alive(pid) {
					delete(alive, pid)
					t.emit.forgetProcess(uint32(pid))
				}
			}
			if len(alive) == 0 {
				reason = TargetsExited
				break
			}
		}
	}
	// Drain: everything the probes sent before now.
	t.reader.SetDeadline(time.Now())
	for {
		rec, err := t.reader.Read()
		if err != nil {
			break
		}
		t.handle(rec.RawSample)
	}
	return reason, nil
}

func (t *Tracer) handle(b []byte) {
	ev, err := parseEvent(b)
	if err != nil {
		t.emit.nBad.Add(1)
		return
	}
	t.emit.handle(ev)
}

// Close detaches every probe and unloads them; safe to call more than
// once and after a failed Run. The metrics keep their last values: the
// MeterProvider's next collection (its shutdown) still reports them.
func (t *Tracer) Close() error {
	t.closeOnce.Do(func() {
		var errs []error
		// The run counters stay registered, so the export that follows
		// Close (the telemetry's shutdown) still carries their last
		// values; with the probes gone, nothing is in flight.
		t.closing.Lock()
		defer t.closing.Unlock()
		t.lost.Store(t.probes.lost())
		t.detached.Store(true)
		if t.reader != nil {
			errs = append(errs, t.reader.Close())
		}
		if t.probes != nil {
			errs = append(errs, t.probes.close())
		}
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}

// inFlight counts the Run calls in flight per session, from the probes'
// map of started calls.
func inFlight(m *ebpf.Map) map[sessionKey]int64 {
	out := map[sessionKey]int64{}
	var key uint64
	var val [valSize]byte
	it := m.Iterate()
	for it.Next(&key, &val) {
		if binary.LittleEndian.Uint64(val[valStart:]) == 0 {
			continue // the thread's last call has ended
		}
		ptr := binary.LittleEndian.Uint64(val[valArg0:])
		out[sessionKey{uint32(key >> 32), ptr}]++
	}
	return out
}

// alive reports whether pid is a live process (not a zombie), under the
// host root.
func (t *Tracer) alive(pid int) bool { return processAlive(filepath.Join(t.cfg.root, "proc"), pid) }

// processAlive reports whether pid is a live process (not a zombie) in
// the proc folder procDir.
func processAlive(procDir string, pid int) bool {
	b, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	st := s[i+2]
	return st != 'Z' && st != 'X'
}

// monoOffset returns Unix time minus CLOCK_MONOTONIC, in nanoseconds: add
// it to a probe's timestamp to get wall time.
func monoOffset() int64 {
	best := int64(-1)
	var off int64
	for i := 0; i < 5; i++ {
		var ts unix.Timespec
		t0 := time.Now()
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			continue
		}
		t1 := time.Now()
		if gap := t1.Sub(t0).Nanoseconds(); best < 0 || gap < best {
			best = gap
			off = (t0.UnixNano()+t1.UnixNano())/2 - ts.Nano()
		}
	}
	return off
}
