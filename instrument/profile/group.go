package profile

import "fmt"

// DefaultMaxPending is how many events a Grouper keeps in memory, by
// default, while no model_run encloses them: a few MB.
const DefaultMaxPending = 8192

// Run is one model_run event with the events of the run it closes.
type Run struct {
	// Run is the model_run event.
	Run Event
	// Events are the run's kernel and SequentialExecutor::Execute events
	// (the main graph's and, nested, its subgraphs'), mostly in the order
	// the profile holds them (events read back from the temporary file
	// come last): sort by TS for a timeline.
	Events []Event
	// Placements places each of Events in the run's tree of nodes, as
	// [Nest] does: Placements[i] is where Events[i] sits.
	Placements []Placement
}

// A GrouperOption configures a Grouper.
type GrouperOption func(*Grouper)

// WithMaxPending sets how many events the Grouper keeps in memory while no
// model_run encloses them (default [DefaultMaxPending]); past it they are
// written to a temporary file and read back when their run closes.
func WithMaxPending(n int) GrouperOption {
	return func(g *Grouper) {
		if n > 0 {
			g.maxPending = n
		}
	}
}

// WithSpillDir sets the folder of the temporary file (default: the
// system's temporary folder).
func WithSpillDir(dir string) GrouperOption { return func(g *Grouper) { g.spill.dir = dir } }

// Grouper gathers a profile's events into runs as they are read. ONNX
// Runtime writes each event when it ends, so a run's operator events come
// before its model_run: the Grouper holds kernel and
// SequentialExecutor::Execute events until the model_run that encloses them
// arrives, then hands back that run with its events, nested ([Run]). A run's events lie inside its interval and, with the
// sequential executor, on its thread: the thread id tells apart runs that
// other threads ran at the same time. A run with no kernel on its own
// thread (a parallel executor) takes every event inside its interval.
//
// Memory is bounded: past a number of held events (see [WithMaxPending])
// the Grouper writes them to a temporary file and reads back only the parts
// a closing run overlaps. Events no run encloses stay held to the end,
// where [Grouper.Outside] counts them (a truncated profile).
//
// The Grouper copies events into buffers it reuses, so grouping profile
// after profile allocates nothing once they have grown. It is not safe for
// concurrent use.
type Grouper struct {
	maxPending int
	pending    []Event // pending[:np] are held; slots past np are reused
	np         int
	scratch    []Event
	spill      spillFile
	spilled    int64
	run        Run
	order      []int
}

// NewGrouper returns a Grouper.
func NewGrouper(opts ...GrouperOption) *Grouper {
	g := &Grouper{maxPending: DefaultMaxPending}
	for _, o := range opts {
		o(g)
	}
	return g
}

// Add takes the next event of the profile. When ev is a model_run it
// returns the run it closes; the Run and its slices stay valid until the
// next call to Add or Reset. Other events (fence events, session events
// other than model_run and SequentialExecutor::Execute) are not kept: Add
// returns nil for them. An error comes only from the temporary file.
func (g *Grouper) Add(ev *Event) (*Run, error) {
	switch {
	case ev.IsKernel(), ev.IsExecute():
		return nil, g.hold(ev)
	case ev.Category == "Session" && ev.Name == "model_run":
		return g.close(ev)
	}
	return nil, nil
}

// Spilled is how many events went through the temporary file.
func (g *Grouper) Spilled() int64 { return g.spilled }

// Outside counts the kernel events held, in memory or in the temporary
// file, that no model_run enclosed: after the last event, those that lie
// outside every run.
func (g *Grouper) Outside() (int, error) {
	n := 0
	for i := range g.pending[:g.np] {
		if g.pending[i].IsKernel() {
			n++
		}
	}
	err := g.spill.each(func(e *Event) {
		if e.IsKernel() {
			n++
		}
	})
	return n, err
}

// Reset forgets every held event and removes the temporary file, keeping
// the buffers, so that the Grouper can read another profile.
func (g *Grouper) Reset() error {
	g.np, g.spilled = 0, 0
	err := g.spill.close()
	g.spill = spillFile{dir: g.spill.dir}
	if err != nil {
		return fmt.Errorf("remove the temporary file of held profile events: %w", err)
	}
	return nil
}

// hold keeps an event until a model_run encloses it, spilling the held
// events when there are too many.
func (g *Grouper) hold(ev *Event) error {
	g.keep(ev)
	if g.np < g.maxPending {
		return nil
	}
	if err := g.spill.write(g.pending[:g.np]); err != nil {
		return err
	}
	g.spilled += int64(g.np)
	g.np = 0
	return nil
}

// keep copies ev into the next slot of pending.
func (g *Grouper) keep(ev *Event) {
	if g.np == len(g.pending) {
		g.pending = append(g.pending, Event{})
	}
	ev.CopyTo(&g.pending[g.np])
	g.np++
}

// close gathers the held events of the run that run closes.
func (g *Grouper) close(run *Event) (*Run, error) {
	lo, hi := run.TS, run.TS+run.Dur
	k, err := g.gather(lo, hi, run.TID, true)
	if err != nil {
		return nil, err
	}
	if !hasKernel(g.pending[k:g.np]) {
		if k, err = g.gather(lo, hi, 0, false); err != nil {
			return nil, err
		}
	}
	evs := g.pending[k:g.np]
	g.np = k
	r := &g.run
	run.CopyTo(&r.Run)
	r.Events = evs
	if cap(r.Placements) < len(evs) {
		r.Placements = make([]Placement, len(evs))
	}
	r.Placements = r.Placements[:len(evs)]
	g.order = nestInto(r.Placements, evs, g.order)
	return r, nil
}

// gather moves the held and spilled events inside [lo, hi] (and on thread
// tid when sameThread) to the end of pending, from the returned index on,
// keeping the order they were read in; events already there (from an
// earlier gather) stay in the group.
func (g *Grouper) gather(lo, hi, tid int64, sameThread bool) (int, error) {
	in := func(e *Event) bool {
		return e.TS >= lo && e.TS+e.Dur <= hi && (!sameThread || e.TID == tid)
	}
	// A stable partition. Each slot's event (and the slices it owns) moves
	// as a whole, so every slot still owns exactly one event's slices; in
	// the common case, a run that takes every held event, nothing moves.
	first := 0
	for first < g.np && in(&g.pending[first]) {
		first++
	}
	k := 0
	if first < g.np {
		g.scratch = append(g.scratch[:0], g.pending[:first]...)
		for i := first; i < g.np; i++ {
			if in(&g.pending[i]) {
				g.scratch = append(g.scratch, g.pending[i])
			} else {
				g.pending[k] = g.pending[i]
				k++
			}
		}
		copy(g.pending[k:g.np], g.scratch)
		clear(g.scratch)
	}
	if len(g.spill.segs) > 0 {
		if err := g.spill.take(in, g.keep, lo, hi); err != nil {
			return k, err
		}
	}
	return k, nil
}

func hasKernel(evs []Event) bool {
	for i := range evs {
		if evs[i].IsKernel() {
			return true
		}
	}
	return false
}
