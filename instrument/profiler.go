package instrument

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// profiledRunner is the profiled copy of a session, of either kind.
type profiledRunner interface{ Destroy() error }

type dynRunner struct{ s *ort.DynamicAdvancedSession }

func (r dynRunner) Destroy() error { return r.s.Destroy() }

type advRunner struct{ s *ort.AdvancedSession }

func (r advRunner) Destroy() error { return r.s.Destroy() }

// profiler samples runs into profiled windows. At most one window is open at
// a time; closed windows are read and emitted in the background.
type profiler struct {
	c        *core
	cfg      Profiling
	sessOpts *ort.SessionOptions // the caller's options; nil means our own
	create   func(*ort.SessionOptions) (profiledRunner, error)

	counter atomic.Uint64
	forced  atomic.Int64 // runs still owed to a ProfileRuns window

	mu       sync.Mutex // guards win, opening, seq, runIndex and the caller's options
	win      *window
	opening  bool
	openDone chan struct{} // closed when the opening under way ends
	seq      int
	closed   bool

	pending  sync.WaitGroup // windows being opened or read
	runIndex atomic.Int64   // profiled runs seen by this session, for ProfiledNode.Run
	warned   atomic.Bool
}

// window is one profiled copy of the session and the runs it served.
type window struct {
	runner  profiledRunner
	dir     string
	prefix  string
	ownDir  bool
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

func newProfiler(c *core, sessOpts *ort.SessionOptions, create func(*ort.SessionOptions) (profiledRunner, error)) *profiler {
	return &profiler{c: c, cfg: c.cfg.profiling, sessOpts: sessOpts, create: create}
}

// sample decides whether this run should be profiled. It costs an atomic add
// (EveryN) or a random number (Ratio).
func (p *profiler) sample() bool {
	if p.forced.Load() > 0 {
		return true
	}
	if n := p.cfg.EveryN; n > 0 {
		return p.counter.Add(1)%uint64(n) == 0
	}
	return p.cfg.Ratio > 0 && rand.Float64() < p.cfg.Ratio
}

// acquire returns the open window locked for one run, or nil when the run
// should go unprofiled: no window is ready yet (one is then opened in the
// background, off the Run path) or another run is using it.
func (p *profiler) acquire() *window {
	p.mu.Lock()
	w := p.win
	if w == nil {
		if !p.opening && !p.closed && p.cfg.enabled() {
			p.startOpening()
			p.pending.Add(1)
			go func() {
				defer p.pending.Done()
				if err := p.open(p.cfg.WindowRuns); err != nil {
					p.report(err)
				}
			}()
		}
		p.mu.Unlock()
		return nil
	}
	p.mu.Unlock()
	if !w.mu.TryLock() {
		return nil
	}
	if w.done {
		w.mu.Unlock()
		return nil
	}
	return w
}

// open creates a profiled copy of the session and makes it the open window.
func (p *profiler) open(limit int) error {
	dir, own := p.cfg.Dir, false
	if dir == "" {
		d, err := os.MkdirTemp("", "ortel-profile-")
		if err != nil {
			p.finishOpening(nil)
			return fmt.Errorf("ortel: profiling window: %w", err)
		}
		dir, own = d, true
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		p.finishOpening(nil)
		return fmt.Errorf("ortel: profiling window: %w", err)
	}
	p.mu.Lock()
	p.seq++
	prefix := filepath.Join(dir, fmt.Sprintf("ortel-%s-%s-w%d", p.c.cfg.modelName, p.c.id, p.seq))
	p.mu.Unlock()

	w := &window{dir: dir, prefix: prefix, ownDir: own, limit: limit}
	runner, err := p.createProfiled(w)
	if err != nil {
		if own {
			os.RemoveAll(dir)
		}
		p.finishOpening(nil)
		return fmt.Errorf("ortel: creating the profiled session: %w", err)
	}
	w.runner = runner
	w.opened = time.Now()
	p.finishOpening(w)
	return nil
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

func (p *profiler) finishOpening(w *window) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opening = false
	close(p.openDone)
	if w == nil {
		return
	}
	if p.closed {
		// Close raced with the opening: read nothing, just clean up.
		p.pending.Add(1)
		go p.finish(w)
		return
	}
	p.win = w
	age := p.cfg.WindowAge
	w.timer = time.AfterFunc(age, func() { p.retire(w) })
}

// force opens a window for the next n runs, synchronously, retiring any
// window that is open.
func (p *profiler) force(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return ErrClosed
		}
		if p.opening {
			// A background opening is under way: let it land, then replace it.
			ch := p.openDone
			p.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		cur := p.win
		p.win = nil
		p.startOpening()
		p.mu.Unlock()
		if cur != nil {
			p.pending.Add(1)
			go p.finish(cur)
		}
		break
	}
	p.forced.Store(int64(n))
	if err := p.open(n); err != nil {
		p.forced.Store(0)
		return err
	}
	return nil
}

// startOpening marks a window as being opened. p.mu must be held.
func (p *profiler) startOpening() {
	p.opening = true
	p.openDone = make(chan struct{})
}

// runProfiled runs one sampled run through window w (locked by acquire).
func (c *core) runProfiled(ctx context.Context, w *window, batch int64, run func(profiledRunner) error) error {
	p := c.prof
	ctx, span := c.begin(ctx, batch, true)
	var err error
	start := time.Now()
	if err = ctx.Err(); err == nil {
		err = run(w.runner)
	}
	end := time.Now()
	w.runs = append(w.runs, profiledRun{
		sc: span.SpanContext(), start: start, end: end, failed: err != nil,
		index: p.runIndex.Add(1) - 1,
	})
	full := len(w.runs) >= w.limit
	if p.forced.Load() > 0 {
		p.forced.Add(-1)
	}
	w.mu.Unlock()
	err = c.end(ctx, span, start, end, err, true)
	if full {
		p.retire(w)
	}
	return err
}

// retire closes window w if it is still the open one, and reads it in the
// background.
func (p *profiler) retire(w *window) {
	p.mu.Lock()
	if p.win != w {
		p.mu.Unlock()
		return
	}
	p.win = nil
	p.pending.Add(1)
	p.mu.Unlock()
	go p.finish(w)
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
		err = p.emit(w, runs)
	}
	if err != nil {
		p.report(err)
	}
	if w.ownDir {
		os.RemoveAll(w.dir)
	}
}

func (p *profiler) emit(w *window, runs []profiledRun) error {
	files, err := filepath.Glob(w.prefix + "*.json")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		if len(runs) == 0 {
			return nil
		}
		return fmt.Errorf("ortel: ONNX Runtime wrote no profile for prefix %q", w.prefix)
	}
	var errs []error
	for _, f := range files {
		_, err := emitWindow(p.c, f, w.created, runs)
		errs = append(errs, err)
		if !p.cfg.KeepFiles {
			os.Remove(f)
		}
	}
	return errors.Join(errs...)
}

// report sends a profiling failure to otel.Handle, once per session: a
// failure repeats on every window, and logging it each time helps nobody.
func (p *profiler) report(err error) {
	if p.warned.CompareAndSwap(false, true) {
		otel.Handle(fmt.Errorf("ortel: operator profiling of model %q: %w (further profiling errors of this session are not reported)", p.c.cfg.modelName, err))
	}
}

// wait blocks until pending windows are emitted or ctx is done.
func (p *profiler) wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		p.pending.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ortel: waiting for operator spans: %w", ctx.Err())
	}
}

// close retires the open window and waits for all windows to be emitted.
func (p *profiler) close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	w := p.win
	p.mu.Unlock()
	if w != nil {
		p.retire(w)
	}
	return p.wait(ctx)
}
