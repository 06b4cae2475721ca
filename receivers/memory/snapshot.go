package memory

import (
	"context"
	"errors"
	"time"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Snapshot is one reading of the host's memory, in bytes, independent of
// the metric callback, for tools that sample the machine themselves (ortel
// bench). Used, Free, Buffers and Cached add up to Total (Cached includes
// the reclaimable slab, as system.memory.usage reports it).
type Snapshot struct {
	Time                        time.Time
	Total                       uint64
	Used, Free, Buffers, Cached uint64
	Available                   uint64 // an estimate of what new programs can use without swapping
	HasAvailable                bool   // whether Available was read (Linux 3.14 and later)
	SwapTotal, SwapFree         uint64 // 0 when no swap is configured
}

// Utilization returns Used / Total, or 0 when Total is unknown.
func (s Snapshot) Utilization() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Used) / float64(s.Total)
}

var errShutdown = errors.New("memory: snapshot after Shutdown")

// Snapshot reads the memory statistics now. It fails when the totals
// cannot be read, or after Shutdown.
func (r *Receiver) Snapshot() (Snapshot, error) {
	r.cb.Lock()
	defer r.cb.Unlock()
	if r.cb.Down() {
		return Snapshot{}, errShutdown
	}
	var fail procfs.Failures
	s := &r.snap
	r.src.read(context.Background(), s, want{}, &fail)
	u := s.usage()
	if !u.ok {
		return Snapshot{}, errors.Join(errors.New("memory: snapshot: the memory totals could not be read"), fail.Err())
	}
	return Snapshot{
		Time:         time.Now(),
		Total:        s.mem[memTotal],
		Used:         u.used,
		Free:         u.free,
		Buffers:      u.buffers,
		Cached:       u.cached,
		Available:    s.mem[memAvailable],
		HasAvailable: s.hasMem(memAvailable),
		SwapTotal:    s.mem[memSwapTotal],
		SwapFree:     min(s.mem[memSwapFree], s.mem[memSwapTotal]),
	}, nil
}
