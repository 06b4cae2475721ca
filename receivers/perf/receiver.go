package perf

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/lifecycle"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

// Part says how one part of the receiver — the hardware counters or the
// software events — fared at construction. `ortel doctor` prints one line
// per part, such as
//
//	perf (hardware counters): not supported: this CPU exposes no hardware performance counters ...
//	perf (software events): ok
type Part struct {
	// Name is HardwarePart or SoftwarePart.
	Name string
	// Events lists the part's events being counted.
	Events []Event
	// UserOnly is true when the events count user space only, because
	// perf_event_paranoid lets this process count nothing in the kernel.
	UserOnly bool
	// Missing holds, for each event of the part that was asked for but
	// could not be opened, an error matching receivers.ErrUnsupported that
	// says why. The other events are counted.
	Missing []error
	// Err is nil when the part counts at least one event, or none of its
	// events is turned on. Otherwise it matches receivers.ErrUnsupported
	// and says why in plain words.
	Err error
}

// Counts is what Snapshot returns for one process.
type Counts struct {
	PID int
	// Values holds the count of each event being counted, since New,
	// scaled for multiplexing (see the package documentation). Events not
	// counted are absent, never zero.
	Values map[Event]uint64
}

// counter is one opened perf event of one thread.
type counter interface {
	read() (reading, error)
	close() error
}

// target is one counted process.
type target struct {
	pid   int
	attrs []metric.ObserveOption
	fds   [numEvents][]counter // one per thread found at construction
	total [numEvents]uint64    // the last reported count: counters never go back

	// the previous collection's counts, for ipc and cache.hit_ratio
	prev    [numEvents]uint64
	prevSet [numEvents]bool
}

// Receiver counts perf events of processes.
type Receiver struct {
	cb       lifecycle.Callback // its lock guards the fields below
	parts    []Part
	targets  []*target
	counted  [numEvents]bool // events opened
	failures procfs.Failures

	counters [numEvents]metric.Int64ObservableCounter // nil when off
	ipc      metric.Float64ObservableGauge
	hitRatio metric.Float64ObservableGauge
}

// needed returns the events to open for the selected metrics: those whose
// counter is on, and those a ratio that is on is computed from.
func needed(sel procfs.Selection) [numEvents]bool {
	var n [numEvents]bool
	for i, e := range events {
		n[i] = sel.On(e.metric)
	}
	if sel.On(semconv.OrtelPerfIPCName) {
		n[evInstructions], n[evCycles] = true, true
	}
	if sel.On(semconv.OrtelPerfCacheHitRatioName) {
		n[evCacheReferences], n[evCacheMisses] = true, true
	}
	return n
}

func newTarget(pid int) *target {
	return &target{pid: pid, attrs: []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(semconv.ProcessPID(pid)))}}
}

// register creates the instruments for the metrics that are on and whose
// events were opened, and registers the callback.
func (r *Receiver) register(mp metric.MeterProvider, sel procfs.Selection) error {
	meter := mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	in := lifecycle.NewInstruments(meter, sel)
	for i, e := range events {
		if !r.counted[i] || !sel.On(e.metric) {
			continue
		}
		c, err := meter.Int64ObservableCounter(e.metric, counterOptions(e.metric)...)
		if err == nil {
			r.counters[i] = c
		}
		in.Add(e.metric, c, err)
	}
	if r.counted[evInstructions] && r.counted[evCycles] {
		lifecycle.Create(in, semconv.OrtelPerfIPCName, &r.ipc, semconv.NewOrtelPerfIPC)
	}
	if r.counted[evCacheReferences] && r.counted[evCacheMisses] {
		lifecycle.Create(in, semconv.OrtelPerfCacheHitRatioName, &r.hitRatio, semconv.NewOrtelPerfCacheHitRatio)
	}
	return r.cb.RegisterLocked("perf", in, r.observe)
}

// counterOptions returns the unit and description of a counter metric from
// the registry.
func counterOptions(name string) []metric.Int64ObservableCounterOption {
	m, _ := semconv.LookupMetric(name)
	return []metric.Int64ObservableCounterOption{metric.WithUnit(m.Unit), metric.WithDescription(m.Brief)}
}

// count reads event e of target t: the scaled counts of its threads added
// up, never below the previous count (scaling is an estimate and may dip).
// Callers hold r.cb's lock.
func (r *Receiver) count(ti int, t *target, e int) (uint64, bool) {
	var sum uint64
	for _, c := range t.fds[e] {
		rd, err := c.read()
		if err != nil {
			r.failures.Fail(ti*numEvents+e, fmt.Errorf("perf: process %d: read %s: %w", t.pid, events[e].event, err))
			return 0, false
		}
		s := rd.scaled()
		if sum > math.MaxUint64-s {
			sum = math.MaxUint64
		} else {
			sum += s
		}
	}
	r.failures.OK(ti*numEvents + e)
	t.total[e] = max(t.total[e], sum)
	return t.total[e], true
}

// observe is the receiver's callback; it runs under r.cb's lock, and not
// after Shutdown (RegisterLocked).
func (r *Receiver) observe(ctx context.Context, o metric.Observer) error {
	for ti, t := range r.targets {
		if ctx.Err() != nil {
			break
		}
		var now [numEvents]uint64
		var read [numEvents]bool
		for e := range numEvents {
			if !r.counted[e] {
				continue
			}
			now[e], read[e] = r.count(ti, t, e)
			if read[e] && r.counters[e] != nil {
				o.ObserveInt64(r.counters[e], procfs.ClampInt64(now[e]), t.attrs...)
			}
		}
		if r.ipc != nil {
			if d, ok := t.delta(evInstructions, now, read); ok {
				if c, ok := t.delta(evCycles, now, read); ok && c > 0 {
					o.ObserveFloat64(r.ipc, float64(d)/float64(c), t.attrs...)
				}
			}
		}
		if r.hitRatio != nil {
			if refs, ok := t.delta(evCacheReferences, now, read); ok && refs > 0 {
				if misses, ok := t.delta(evCacheMisses, now, read); ok {
					o.ObserveFloat64(r.hitRatio, 1-min(float64(misses)/float64(refs), 1), t.attrs...)
				}
			}
		}
		t.prev, t.prevSet = now, read
	}
	return errors.Join(r.failures.Err(), ctx.Err())
}

// delta returns how much event e counted since the previous collection,
// when both collections read it.
func (t *target) delta(e int, now [numEvents]uint64, read [numEvents]bool) (uint64, bool) {
	if !read[e] || !t.prevSet[e] {
		return 0, false
	}
	return now[e] - t.prev[e], true
}

// Parts returns how each part of the receiver fared at construction: the
// hardware counters first, then the software events.
func (r *Receiver) Parts() []Part {
	out := slices.Clone(r.parts)
	for i := range out {
		out[i].Events = slices.Clone(out[i].Events)
		out[i].Missing = slices.Clone(out[i].Missing)
	}
	return out
}

// Snapshot reads the counted events of every process now: counts since
// New, for callers that need the numbers directly (instructions per
// inference, say). Events that fail to read are left out and their
// failures returned joined (each failure once).
func (r *Receiver) Snapshot() ([]Counts, error) {
	r.cb.Lock()
	defer r.cb.Unlock()
	out := make([]Counts, 0, len(r.targets))
	for ti, t := range r.targets {
		c := Counts{PID: t.pid, Values: map[Event]uint64{}}
		for e := range numEvents {
			if !r.counted[e] {
				continue
			}
			if v, ok := r.count(ti, t, e); ok {
				c.Values[events[e].event] = v
			}
		}
		out = append(out, c)
	}
	return out, r.failures.Err()
}

// Shutdown unregisters the callback and closes the perf events. It is safe
// to call more than once.
func (r *Receiver) Shutdown(context.Context) error {
	return r.cb.Shutdown("perf", r.closeLocked)
}

// closeLocked closes the perf events. Callers hold r.cb's lock, or are
// New, which has not shared r yet.
func (r *Receiver) closeLocked() error {
	var errs []error
	for _, t := range r.targets {
		for e := range t.fds {
			for _, c := range t.fds[e] {
				errs = append(errs, c.close())
			}
			t.fds[e] = nil
		}
	}
	r.counted = [numEvents]bool{}
	return errors.Join(errs...)
}
