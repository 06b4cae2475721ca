package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
)

// execFunc runs request seq of a phase on worker w.
type execFunc func(ctx context.Context, w, seq int) error

// phase is one measured phase of load: how many requests, how they arrive,
// how many workers serve them.
type phase struct {
	// label names the phase on its progress indicator (default
	// "measuring").
	label    string
	scenario Scenario
	workers  int
	requests int           // requests to issue; 0: issue for duration
	duration time.Duration // used when requests is 0; server: none arrives after it
	qps      float64       // server: target arrival rate
	seed     uint64        // server: seed of the arrival times

	// A server phase stops early once more than budget requests violated
	// threshold (took longer, or failed): an SLA trial's verdict is then
	// known. 0 never stops early.
	threshold time.Duration
	budget    int
	// decide, when set (server), is asked after every request with the
	// requests done and the violations of threshold so far: decideStop
	// ends the phase at once (like budget), decideEnough issues no more
	// requests but still runs those already queued, so they count.
	decide func(done, violations int) decision

	// until, when set (closed-loop phases), is evaluated on the successful
	// latencies (seconds) so far, at growing intervals (see nextCheck); the
	// phase stops once it returns true. requests and duration still bound
	// the phase.
	until func(latencies []float64) bool

	// depth, when set, counts the requests waiting in the queue (server,
	// offline).
	depth *queueDepth
	// observe, when set, is called for every finished request, from the
	// worker goroutines.
	observe func(record)
}

// decision is what a phase's decide rule says after a request.
type decision int

const (
	decideContinue decision = iota
	decideEnough            // stop issuing; run what is queued
	decideStop              // stop now (the phase is aborted)
)

// record is one finished request.
type record struct {
	seq int
	// offset is when the request arrived (server: its scheduled arrival;
	// others: when its run started), since the phase began.
	offset  time.Duration
	latency time.Duration
	wait    time.Duration // server, offline: from arrival to the start of its run
	err     error
}

// phaseResult is what a phase measured.
type phaseResult struct {
	records  []record // finished requests, by seq
	start    time.Time
	planned  int // requests the phase meant to issue (0: unknown, duration-bound)
	wall     time.Duration
	maxDepth int64
	aborted  bool
	// timedOut: a closed-loop phase with until ran out of its duration.
	timedOut bool
	// measurement is the interference verdict on the phase, when watched.
	measurement *report.Measurement
}

// latencies returns the latencies of the successful requests, in seconds.
func (r *phaseResult) latencies() []float64 {
	out := make([]float64, 0, len(r.records))
	for _, rec := range r.records {
		if rec.err == nil {
			out = append(out, rec.latency.Seconds())
		}
	}
	return out
}

func (r *phaseResult) errors() int {
	n := 0
	for _, rec := range r.records {
		if rec.err != nil {
			n++
		}
	}
	return n
}

// queueDepth counts the requests waiting in a phase's queue. onChange, when
// set, receives every change: the ortel.load.queue.depth instrument.
type queueDepth struct {
	n        atomic.Int64
	onChange func(delta int64)
}

func (q *queueDepth) add(d int64) int64 {
	v := q.n.Add(d)
	if q.onChange != nil {
		q.onChange(d)
	}
	return v
}

func (q *queueDepth) load() int64 { return q.n.Load() }

// reset empties the queue at the end of a phase (requests a stopped phase
// never ran leave it).
func (q *queueDepth) reset() {
	if v := q.n.Load(); v != 0 {
		q.add(-v)
	}
}

// maxArrivals bounds the arrival schedule of one server phase.
const maxArrivals = 10_000_000

// errTooManyFailures stops a phase where most requests fail.
var errTooManyFailures = errors.New("more than half of the runs failed")

// runPhase runs one phase with exec and returns its records.
func runPhase(ctx context.Context, p phase, exec execFunc) (*phaseResult, error) {
	if p.workers < 1 {
		p.workers = 1
	}
	if p.depth == nil {
		p.depth = &queueDepth{}
	}
	if p.scenario == Server {
		return serverPhase(ctx, p, exec)
	}
	return closedLoop(ctx, p, exec)
}

// collector gathers records from the workers and watches failures.
type collector struct {
	mu      sync.Mutex
	records []record
	lastEnd time.Time
	done    int
	errs    int
	lastErr error
	check   int // until: evaluate it when done reaches this
}

// untilDue returns the successful latencies when the phase's until rule is
// due for evaluation, else nil.
func (c *collector) untilDue() []float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done < max(c.check, autoMinRuns) {
		return nil
	}
	c.check = nextCheck(c.done)
	out := make([]float64, 0, len(c.records))
	for _, r := range c.records {
		if r.err == nil {
			out = append(out, r.latency.Seconds())
		}
	}
	return out
}

func (c *collector) add(r record, end time.Time) (fail bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r)
	if end.After(c.lastEnd) {
		c.lastEnd = end
	}
	c.done++
	if r.err != nil {
		c.errs++
		c.lastErr = r.err
	}
	return c.errs > 10 && c.errs*2 > c.done
}

func (c *collector) result(start time.Time) *phaseResult {
	slices.SortFunc(c.records, func(a, b record) int { return a.seq - b.seq })
	res := &phaseResult{records: c.records, start: start}
	if !c.lastEnd.IsZero() {
		res.wall = c.lastEnd.Sub(start)
	}
	return res
}

// closedLoop runs the single-stream, concurrent and offline phases: each
// worker takes the next request number and runs it as soon as its previous
// one ended. Offline differs only in that its queue (the requests not yet
// taken) is reported.
func closedLoop(ctx context.Context, p phase, exec execFunc) (*phaseResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		c    collector
		wg   sync.WaitGroup
	)
	offline := p.scenario == Offline && p.requests > 0
	if offline {
		p.depth.add(int64(p.requests))
	}
	start := time.Now()
	deadline := start.Add(p.duration)
	timed := p.requests == 0 || p.until != nil && p.duration > 0
	var done, timedOut atomic.Bool
	for w := 0; w < p.workers; w++ {
		wg.Go(func() {
			for ctx.Err() == nil && !done.Load() {
				seq := int(next.Add(1) - 1)
				if p.requests > 0 && seq >= p.requests {
					return
				}
				t := time.Now()
				if timed && !t.Before(deadline) {
					timedOut.Store(true)
					return
				}
				if offline {
					p.depth.add(-1)
				}
				err := exec(ctx, w, seq)
				end := time.Now()
				r := record{seq: seq, offset: t.Sub(start), latency: end.Sub(t), err: err}
				if offline {
					r.wait = r.offset
				}
				if p.observe != nil {
					p.observe(r)
				}
				if c.add(r, end) {
					cancel(fmt.Errorf("%w; last error: %w", errTooManyFailures, err))
					return
				}
				if p.until != nil {
					if lat := c.untilDue(); lat != nil && p.until(lat) {
						done.Store(true)
					}
				}
			}
		})
	}
	wg.Wait()
	p.depth.reset()
	if cause := context.Cause(ctx); cause != nil {
		return nil, cause
	}
	res := c.result(start)
	res.planned = p.requests
	res.timedOut = timedOut.Load() && p.until != nil
	if p.until != nil {
		res.planned = 0 // the rule, not a count, ended it
	}
	if offline {
		res.maxDepth = int64(p.requests)
	}
	return res, nil
}

// arrivals returns the scheduled arrival times of a Poisson process of rate
// qps (exponential gaps of mean 1/qps, seeded): n of them, or as many as
// fall before d when n is 0.
func arrivals(qps float64, n int, d time.Duration, seed uint64) ([]time.Duration, error) {
	if !(qps > 0) || math.IsInf(qps, 0) {
		return nil, fmt.Errorf("arrival rate %v: want a positive number", qps)
	}
	if n == 0 {
		if want := qps * d.Seconds(); want > maxArrivals {
			return nil, fmt.Errorf("%.0f requests/s for %s is %.0f requests; at most %d fit in one phase", qps, d, want, maxArrivals)
		}
	} else if n > maxArrivals {
		return nil, fmt.Errorf("%d requests: at most %d fit in one phase", n, maxArrivals)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	var out []time.Duration
	if n > 0 {
		out = make([]time.Duration, 0, n)
	}
	t := 0.0
	for {
		t += rng.ExpFloat64() / qps
		at := time.Duration(t * float64(time.Second))
		if n > 0 && len(out) == n || n == 0 && at >= d {
			return out, nil
		}
		out = append(out, at)
	}
}

// serverPhase runs the open loop: a scheduler goroutine releases each
// request into the queue at its precomputed arrival time, whatever the
// workers are doing; workers take requests in arrival order. A request's
// latency runs from its scheduled arrival to the end of its run, so when
// the workers fall behind, the time requests spend queued is in the
// latencies: the measurement does not slow down the load it measures
// (coordinated omission).
func serverPhase(ctx context.Context, p phase, exec execFunc) (*phaseResult, error) {
	at, err := arrivals(p.qps, p.requests, p.duration, p.seed)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	type item struct {
		seq int
		at  time.Duration
	}
	queue := make(chan item, len(at))
	var (
		stop       atomic.Bool // trial verdict known: issue and run no more
		enough     atomic.Bool // verdict reached: issue no more, run what is queued
		done       atomic.Int64
		violations atomic.Int64
		maxDepth   atomic.Int64
		c          collector
		wg         sync.WaitGroup
	)
	start := time.Now()
	wg.Go(func() { // the scheduler
		defer close(queue)
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for i, a := range at {
			if stop.Load() || enough.Load() || p.requests > 0 && p.duration > 0 && a >= p.duration {
				return
			}
			if d := time.Until(start.Add(a)); d > 0 {
				timer.Reset(d)
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			}
			d := p.depth.add(1)
			for m := maxDepth.Load(); d > m && !maxDepth.CompareAndSwap(m, d); m = maxDepth.Load() {
			}
			queue <- item{seq: i, at: a}
		}
	})
	for w := 0; w < p.workers; w++ {
		wg.Go(func() {
			for it := range queue {
				p.depth.add(-1)
				if stop.Load() || ctx.Err() != nil {
					continue
				}
				due := start.Add(it.at)
				begin := time.Now()
				err := exec(ctx, w, it.seq)
				end := time.Now()
				r := record{seq: it.seq, offset: it.at, latency: end.Sub(due), wait: max(begin.Sub(due), 0), err: err}
				if p.observe != nil {
					p.observe(r)
				}
				over := err != nil || r.latency > p.threshold
				if (p.budget > 0 || p.decide != nil) && over {
					if violations.Add(1) > int64(p.budget) && p.budget > 0 {
						stop.Store(true)
					}
				}
				if p.decide != nil {
					switch p.decide(int(done.Add(1)), int(violations.Load())) {
					case decideStop:
						stop.Store(true)
					case decideEnough:
						enough.Store(true)
					}
				}
				if c.add(r, end) && p.budget == 0 && p.decide == nil {
					cancel(fmt.Errorf("%w; last error: %w", errTooManyFailures, err))
					stop.Store(true)
				}
			}
		})
	}
	wg.Wait()
	p.depth.reset()
	if cause := context.Cause(ctx); cause != nil {
		return nil, cause
	}
	res := c.result(start)
	res.planned = len(at)
	res.maxDepth = maxDepth.Load()
	res.aborted = stop.Load()
	return res, nil
}
