package instrument

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument/internal/ortapi"
)

// ErrRateLimited is returned by TriggerProfiling when the last trigger was
// less than Profiling.TriggerInterval ago.
var ErrRateLimited = errors.New("ortel: profiling trigger rate-limited")

// windowsOnly makes profilers use session-copy windows even where per-run
// profiling exists. Tests set it to cover the ONNX Runtime 1.24 path.
var windowsOnly atomic.Bool

// ProfilingStats counts what operator profiling did for one session.
type ProfilingStats struct {
	// PerRun is true when runs are profiled one by one (ONNX Runtime ≥ 1.25)
	// and false when they go through profiled session copies (1.24).
	PerRun bool
	// Selected counts the runs chosen for profiling: sampled, triggered or
	// asked for with ProfileRuns.
	Selected int64
	// Profiled counts the selected runs that ran with the profiler on.
	Profiled int64
	// Missed counts the selected runs that ran unprofiled: the profiler
	// could not be armed, or the caller's context ended while waiting for a
	// profiled window. Each first failure is reported through otel.Handle.
	Missed int64
	// Emitted counts the profiled runs whose operator spans were emitted.
	Emitted int64
	// Spans counts the operator spans emitted.
	Spans int64
	// Lost counts operator spans that could not be delivered: their
	// profile could not be read, or the TracerProvider was shut down before
	// they were emitted (close sessions before shutting the providers down).
	Lost int64
	// Triggers counts the slow-run and on-demand triggers accepted.
	Triggers int64
	// Throttled counts the runs sampling selected that Profiling.MaxCPUShare
	// held back: each wait ends with the first run after profiling's cost
	// was paid for, which is profiled instead. 0 without a cap.
	Throttled int64
	// EffectiveEveryN is the runs per profiled run so far, with
	// Profiling.MaxCPUShare set (0 without a cap, or before the first
	// profiled run).
	EffectiveEveryN float64
	// CPUShare is what profiling cost (extra run time and emission CPU)
	// over the time the runs took, with Profiling.MaxCPUShare set; 0
	// without a cap.
	CPUShare float64
}

// profiledRunner is the profiled copy of a session, of either kind (the
// ONNX Runtime 1.24 fallback).
type profiledRunner interface{ Destroy() error }

type dynRunner struct{ s *ort.DynamicAdvancedSession }

func (r dynRunner) Destroy() error { return r.s.Destroy() }

type advRunner struct{ s *ort.AdvancedSession }

func (r advRunner) Destroy() error { return r.s.Destroy() }

// profiler decides which runs are profiled and turns their profiles into
// operator spans, in the background.
//
// On ONNX Runtime 1.25 and later each selected run goes through the session
// itself with run-level profiling switched on in its RunOptions: the run
// writes its own profile, which is read and emitted once the run returned.
// On 1.24 selected runs go through a profiled copy of the session (a window
// of up to WindowRuns runs), opened ahead of time so that a sampled request
// does not pay for creating it.
type profiler struct {
	c        *core
	cfg      Profiling
	perRun   bool
	sessOpts *ort.SessionOptions // the caller's options; nil means our own
	create   func(*ort.SessionOptions) (profiledRunner, error)

	counter     atomic.Uint64
	owed        atomic.Int64 // runs still owed to triggers and ProfileRuns
	lastTrigger atomic.Int64 // unix nanoseconds of the last accepted trigger
	seq         atomic.Int64 // file prefixes
	runIndex    atomic.Int64 // profiled runs seen by this session, for ProfiledNode.Run

	selected, profiled, missed, emitted, spans, lost, triggers atomic.Int64

	runOpts chan *ort.RunOptions // free list of per-run options
	emitSem chan struct{}        // one profile read at a time; guards em
	em      *emitter
	cap     *cpuCap // nil unless Profiling.MaxCPUShare is set

	dirOnce sync.Once
	dir     string
	ownDir  bool
	dirErr  error

	mu       sync.Mutex // guards win, opening, openDone, openErr, closed and the caller's options
	win      *window
	opening  bool
	openDone chan struct{} // closed when the opening under way ends
	openErr  error
	closed   bool

	pending sync.WaitGroup // profiles being read, windows being opened or read
	warned  atomic.Bool
	lostMsg atomic.Bool
}

// window is one profiled copy of the session and the runs it served.
type window struct {
	runner  profiledRunner
	prefix  string
	opened  time.Time
	created time.Time // when the copy's creation started: ORT's profile clock starts near it
	limit   int
	timer   *time.Timer

	mu   sync.Mutex // serializes runs: ORT events are matched to runs by order
	runs []profiledRun
	done bool
}

// profiledRun is what the run span recorded, for placing its operators.
type profiledRun struct {
	sc         trace.SpanContext
	start, end time.Time
	failed     bool
	index      int64
}

// newProfiler returns the session's profiler. create builds a profiled copy
// of the session for the 1.24 fallback; nil when the model is unknown
// (a wrapped session), which then needs per-run profiling.
func newProfiler(c *core, sessOpts *ort.SessionOptions, create func(*ort.SessionOptions) (profiledRunner, error)) (*profiler, error) {
	p := &profiler{
		c: c, cfg: c.cfg.profiling, sessOpts: sessOpts, create: create,
		runOpts: make(chan *ort.RunOptions, 8),
		emitSem: make(chan struct{}, 1),
		em:      newEmitter(c),
		cap:     newCPUCap(c.cfg.profiling.MaxCPUShare),
	}
	perRunErr := ortapi.RunProfiling()
	p.perRun = perRunErr == nil && !windowsOnly.Load()
	if !p.perRun && create == nil {
		if perRunErr == nil {
			perRunErr = errors.New("session-copy windows need the model")
		}
		return nil, fmt.Errorf("ortel: operator profiling of a wrapped session needs run-level profiling (ONNX Runtime 1.25 or later): %w", perRunErr)
	}
	if !p.perRun && p.cfg.enabled() {
		p.prewarm()
	}
	return p, nil
}

// sample decides whether this run is profiled: runs owed to a trigger or to
// ProfileRuns first, then every Nth run (an atomic add) or a random draw.
// Every run it selects is profiled: the caller waits for a window if it must.
func (p *profiler) sample() bool {
	for {
		n := p.owed.Load()
		if n <= 0 {
			break
		}
		if p.owed.CompareAndSwap(n, n-1) {
			return true
		}
	}
	var picked bool
	if n := p.cfg.EveryN; n > 0 {
		picked = p.counter.Add(1)%uint64(n) == 0
	} else {
		picked = p.cfg.Ratio > 0 && rand.Float64() < p.cfg.Ratio
	}
	if p.cap != nil {
		return p.cap.allow(picked)
	}
	return picked
}

// plainRan is called with the duration of every unprofiled run that ended
// well: the CPU cap earns its share, and a run slower than SlowRun triggers
// profiling of the next TailRuns runs.
func (p *profiler) plainRan(d time.Duration) {
	if p.cap != nil {
		p.cap.plain(d)
	}
	if p.cfg.SlowRun > 0 && d > p.cfg.SlowRun {
		p.trigger(p.cfg.TailRuns)
	}
}

// trigger owes the next n runs to the profiler unless the last trigger was
// less than TriggerInterval ago.
func (p *profiler) trigger(n int) bool {
	now := time.Now().UnixNano()
	last := p.lastTrigger.Load()
	if last != 0 && now-last < int64(p.cfg.TriggerInterval) {
		return false
	}
	if !p.lastTrigger.CompareAndSwap(last, now) {
		return false // another trigger won the race
	}
	p.triggers.Add(1)
	p.owed.Add(int64(n))
	if !p.perRun {
		p.prewarm()
	}
	return true
}

// memoryTempRoot is where the default profile folder is made: a
// memory-backed file system where there is one, else the system's temporary
// folder (""). ONNX Runtime writes one file per profiled run, and creating it
// on a disk cost more than the profiling itself: a profiled Silero VAD run
// took 1.45 ms with its file on the disk and 0.55 ms on /dev/shm (a 3-node
// model: 0.39-0.86 ms against 35 µs). Files are removed once read.
var memoryTempRoot = func() string {
	if runtime.GOOS == "linux" {
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			return "/dev/shm"
		}
	}
	return ""
}()

// profileDir returns the folder profiles are written to, created once.
func (p *profiler) profileDir() (string, error) {
	p.dirOnce.Do(func() {
		if p.cfg.Dir != "" {
			p.dir, p.dirErr = p.cfg.Dir, os.MkdirAll(p.cfg.Dir, 0o755)
			return
		}
		p.dir, p.dirErr = os.MkdirTemp(memoryTempRoot, "ortel-profile-")
		if p.dirErr != nil && memoryTempRoot != "" {
			p.dir, p.dirErr = os.MkdirTemp("", "ortel-profile-")
		}
		p.ownDir = p.dirErr == nil
	})
	if p.dirErr != nil {
		return "", fmt.Errorf("ortel: profile folder: %w", p.dirErr)
	}
	return p.dir, nil
}

func (p *profiler) nextPrefix(kind string) (string, error) {
	dir, err := p.profileDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, fmt.Sprintf("ortel-%s-%s-%s%d", p.c.cfg.modelName, p.c.id, kind, p.seq.Add(1))), nil
}

// profileFiles lists what ONNX Runtime wrote for prefix: <prefix>_<time>.json.
func profileFiles(prefix string) ([]string, error) {
	return filepath.Glob(prefix + "_*.json")
}

// arm takes run options with profiling switched on, writing to a new prefix.
func (p *profiler) arm() (*ort.RunOptions, string, error) {
	prefix, err := p.nextPrefix("r")
	if err != nil {
		return nil, "", err
	}
	var ro *ort.RunOptions
	select {
	case ro = <-p.runOpts:
	default:
		if ro, err = ort.NewRunOptions(); err != nil {
			return nil, "", err
		}
	}
	if err := ortapi.EnableRunProfiling(ro, prefix); err != nil {
		ro.Destroy()
		return nil, "", err
	}
	return ro, prefix, nil
}

// disarm switches profiling off and keeps ro for the next profiled run.
func (p *profiler) disarm(ro *ort.RunOptions) {
	if err := ortapi.DisableRunProfiling(ro); err != nil {
		ro.Destroy()
		p.report(err)
		return
	}
	select {
	case p.runOpts <- ro:
	default:
		ro.Destroy()
	}
}

// miss counts a selected run that could not be profiled.
func (p *profiler) miss(err error) {
	p.missed.Add(1)
	if err != nil {
		p.report(err)
	}
}

// runProfiled runs one selected run with the profiler on. perRun runs the
// session with the given run options (nil: unprofiled); inWindow runs a
// window's profiled copy.
func (c *core) runProfiled(ctx context.Context, batch int64,
	perRun func(*ort.RunOptions) error, inWindow func(profiledRunner) error) error {
	p := c.prof
	p.selected.Add(1)
	if p.perRun {
		ro, prefix, err := p.arm()
		if err != nil {
			p.miss(err)
			return c.runPlain(ctx, batch, func() error { return perRun(nil) })
		}
		ctx, span := c.begin(ctx, batch, true)
		p.markInterval(span)
		start := time.Now()
		if err = ctx.Err(); err == nil {
			err = perRun(ro)
		}
		end := time.Now()
		p.disarm(ro)
		p.profiled.Add(1)
		if p.cap != nil && err == nil {
			p.cap.profiledRun(end.Sub(start))
		}
		r := profiledRun{sc: span.SpanContext(), start: start, end: end, failed: err != nil,
			index: p.runIndex.Add(1) - 1}
		err = c.end(ctx, span, start, end, err, true)
		p.pending.Add(1)
		go p.emitRun(prefix, r)
		return err
	}
	w, err := p.acquire(ctx)
	if w == nil {
		p.miss(err)
		return c.runPlain(ctx, batch, func() error { return perRun(nil) })
	}
	ctx, span := c.begin(ctx, batch, true)
	p.markInterval(span)
	start := time.Now()
	if err = ctx.Err(); err == nil {
		err = inWindow(w.runner)
	}
	end := time.Now()
	p.profiled.Add(1)
	if p.cap != nil && err == nil {
		p.cap.profiledRun(end.Sub(start))
	}
	w.runs = append(w.runs, profiledRun{
		sc: span.SpanContext(), start: start, end: end, failed: err != nil,
		index: p.runIndex.Add(1) - 1,
	})
	full := len(w.runs) >= w.limit
	w.mu.Unlock()
	err = c.end(ctx, span, start, end, err, true)
	if full {
		p.retire(w, true)
	}
	return err
}

// markInterval sets, with a CPU cap, the effective sampling interval on
// a profiled run's span.
func (p *profiler) markInterval(span trace.Span) {
	if p.cap == nil || !span.IsRecording() {
		return
	}
	runs, profiled := p.cap.runs.Load()+1, p.profiled.Load()+1
	span.SetAttributes(attribute.Float64(attrProfilingInterval, float64(runs)/float64(profiled)))
}

// runPlain is an unprofiled run inside a run span.
func (c *core) runPlain(ctx context.Context, batch int64, run func() error) error {
	ctx, span := c.begin(ctx, batch, false)
	var err error
	start := time.Now()
	if err = ctx.Err(); err == nil {
		err = run()
	}
	end := time.Now()
	err = c.end(ctx, span, start, end, err, false)
	if err == nil && c.prof != nil {
		c.prof.plainRan(end.Sub(start))
	}
	return err
}

// emitRun reads the profile one run wrote and emits its operators.
func (p *profiler) emitRun(prefix string, r profiledRun) {
	defer p.pending.Done()
	p.emitSem <- struct{}{}
	defer func() { <-p.emitSem }()
	if p.cap != nil {
		stop := threadClock()
		defer func() { p.cap.charge(stop()) }()
	}
	files, err := profileFiles(prefix)
	if err == nil && len(files) == 0 && !r.failed {
		err = fmt.Errorf("ONNX Runtime wrote no profile for prefix %q", prefix)
	}
	if err != nil {
		p.report(err)
		return
	}
	for _, f := range files {
		n, err := emitWindow(p.em, f, r.start, []profiledRun{r})
		p.account(n, err)
		if !p.cfg.KeepFiles {
			os.Remove(f)
		}
	}
}

// account counts what one profile file gave.
func (p *profiler) account(spans int, err error) {
	if spans > 0 {
		p.emitted.Add(1)
		p.spans.Add(int64(spans))
	}
	if err != nil {
		p.report(err)
	}
}

// lostSpan counts an operator span the TracerProvider no longer records,
// and says so once per session.
func (c *core) lostSpan() {
	if c.prof == nil {
		return
	}
	c.prof.lost.Add(1)
	if c.prof.lostMsg.CompareAndSwap(false, true) {
		otel.Handle(fmt.Errorf("ortel: operator spans of model %q were dropped: the TracerProvider was shut down before they were emitted; close or flush sessions before shutting the providers down (ProfilingStats().Lost counts them)", c.cfg.modelName))
	}
}

// emitTracer returns a tracer fresh from the provider: an SDK provider that
// was shut down answers a no-op tracer, which tells a dropped span apart.
func (c *core) emitTracer() trace.Tracer {
	return c.cfg.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version()))
}

// prewarm opens a window in the background if none is open or opening.
func (p *profiler) prewarm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prewarmLocked()
}

func (p *profiler) prewarmLocked() {
	if p.win != nil || p.opening || p.closed || p.perRun {
		return
	}
	p.opening = true
	p.openDone = make(chan struct{})
	p.pending.Add(1)
	go func() {
		defer p.pending.Done()
		p.open(p.cfg.WindowRuns)
	}()
}

// acquire returns the open window locked for one run, waiting for one to be
// opened when none is (bounded by ctx). It returns nil and why when the run
// cannot be profiled.
func (p *profiler) acquire(ctx context.Context) (*window, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, nil
		}
		w := p.win
		if w == nil {
			if !p.opening && p.openErr != nil {
				err := p.openErr
				p.openErr = nil // the next selected run tries again
				p.prewarmLocked()
				p.mu.Unlock()
				return nil, err
			}
			p.prewarmLocked()
			ch := p.openDone
			p.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, nil
			}
		}
		p.mu.Unlock()
		w.mu.Lock()
		if w.done {
			w.mu.Unlock()
			continue
		}
		return w, nil
	}
}

// open creates a profiled copy of the session and makes it the open window.
func (p *profiler) open(limit int) {
	prefix, err := p.nextPrefix("w")
	var w *window
	if err == nil {
		w = &window{prefix: prefix, limit: limit}
		w.runner, err = p.createProfiled(w)
		if err != nil {
			err = fmt.Errorf("ortel: creating the profiled session: %w", err)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opening = false
	close(p.openDone)
	if err != nil {
		p.openErr = err
		return
	}
	w.opened = time.Now()
	if p.closed {
		// Close raced with the opening: read nothing, just clean up.
		p.pending.Add(1)
		go p.finish(w)
		return
	}
	p.win = w
	w.timer = time.AfterFunc(p.cfg.WindowAge, func() { p.retire(w, true) })
}

// createProfiled builds the profiled copy, switching profiling on in the
// session options only for the time of the call. ORT copies the options into
// the session, so the caller's sessions are unaffected.
func (p *profiler) createProfiled(w *window) (profiledRunner, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	opts := p.sessOpts
	if opts == nil {
		o, err := ort.NewSessionOptions()
		if err != nil {
			return nil, err
		}
		defer o.Destroy()
		opts = o
	}
	if err := opts.EnableProfiling(w.prefix); err != nil {
		return nil, err
	}
	defer func() {
		if err := opts.DisableProfiling(); err != nil {
			otel.Handle(err)
		}
	}()
	w.created = time.Now()
	return p.create(opts)
}

// retire closes window w if it is still the open one, reads it in the
// background and, when next is set, opens the next window ahead of time.
func (p *profiler) retire(w *window, next bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.win != w {
		return
	}
	p.win = nil
	p.pending.Add(1)
	go p.finish(w)
	if next && p.cfg.enabled() {
		p.prewarmLocked()
	}
}

// finish destroys the window's session (which makes ORT write the profile),
// reads the profile and emits the operator spans.
func (p *profiler) finish(w *window) {
	defer p.pending.Done()
	w.mu.Lock() // wait for a run in flight
	w.done = true
	runs := w.runs
	w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	err := w.runner.Destroy()
	if err == nil {
		err = p.emitWindowFiles(w, runs)
	}
	if err != nil {
		p.report(err)
	}
}

func (p *profiler) emitWindowFiles(w *window, runs []profiledRun) error {
	files, err := profileFiles(w.prefix)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		if len(runs) == 0 {
			return nil
		}
		return fmt.Errorf("ortel: ONNX Runtime wrote no profile for prefix %q", w.prefix)
	}
	p.emitSem <- struct{}{}
	defer func() { <-p.emitSem }()
	if p.cap != nil {
		stop := threadClock()
		defer func() { p.cap.charge(stop()) }()
	}
	for _, f := range files {
		n, err := emitWindow(p.em, f, w.created, runs)
		p.emitted.Add(int64(min(len(runs), max(n, 0))))
		p.spans.Add(int64(n))
		if err != nil {
			p.report(err)
		}
		if !p.cfg.KeepFiles {
			os.Remove(f)
		}
	}
	return nil
}

// report sends a profiling failure to otel.Handle, once per session: a
// failure repeats on every run, and logging it each time helps nobody.
func (p *profiler) report(err error) {
	if p.warned.CompareAndSwap(false, true) {
		otel.Handle(fmt.Errorf("ortel: operator profiling of model %q: %w (further profiling errors of this session are not reported)", p.c.cfg.modelName, err))
	}
}

// flush makes what the profiler holds readable (retiring an open window
// that served runs) and waits until it was emitted or ctx is done.
func (p *profiler) flush(ctx context.Context) error {
	p.mu.Lock()
	w := p.win
	p.mu.Unlock()
	if w != nil {
		w.mu.Lock()
		served := len(w.runs) > 0
		w.mu.Unlock()
		if served {
			p.retire(w, true)
		}
	}
	return p.wait(ctx)
}

// wait blocks until pending profiles are emitted or ctx is done.
func (p *profiler) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		p.pending.Wait()
		close(done)
	}()
	select {
	case <-done:
		p.cleanup()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ortel: waiting for the operator spans of model %q (%d profiled runs, %d emitted): %w",
			p.c.cfg.modelName, p.profiled.Load(), p.emitted.Load(), ctx.Err())
	}
}

// stop runs once the session is closed and idle: it retires the open window
// and releases the pooled run options.
func (p *profiler) stop() {
	p.mu.Lock()
	p.closed = true
	w := p.win
	p.mu.Unlock()
	if w != nil {
		p.retire(w, false)
	}
	for {
		select {
		case ro := <-p.runOpts:
			ro.Destroy()
		default:
			return
		}
	}
}

// cleanup removes the profile folder the profiler created, once closed and
// nothing is pending.
func (p *profiler) cleanup() {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed && p.ownDir && !p.cfg.KeepFiles {
		os.RemoveAll(p.dir)
	}
}

func (p *profiler) stats() ProfilingStats {
	st := ProfilingStats{
		PerRun: p.perRun, Selected: p.selected.Load(), Profiled: p.profiled.Load(),
		Missed: p.missed.Load(), Emitted: p.emitted.Load(), Spans: p.spans.Load(),
		Lost: p.lost.Load(), Triggers: p.triggers.Load(),
	}
	if k := p.cap; k != nil {
		st.Throttled = k.throttled.Load()
		st.CPUShare = k.measured()
		if st.Profiled > 0 {
			st.EffectiveEveryN = float64(k.runs.Load()) / float64(st.Profiled)
		}
	}
	return st
}
