package instrument

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"
)

// model says where a session's model comes from: a file or bytes in memory.
// A profiled window needs it to build its profiled copy of the session.
type model struct {
	path string
	data []byte
}

func (m model) String() string {
	if m.path != "" {
		return fmt.Sprintf("%q", m.path)
	}
	return fmt.Sprintf("(%d bytes in memory)", len(m.data))
}

// inputInfo reads the model's declared inputs, to learn whether its first
// input has a batch dimension.
func (m model) inputInfo() ([]ort.InputOutputInfo, error) {
	if m.path != "" {
		in, _, err := ort.GetInputOutputInfo(m.path)
		return in, err
	}
	in, _, err := ort.GetInputOutputInfoWithONNXData(m.data)
	return in, err
}

// DynamicSession is an instrumented ort.DynamicAdvancedSession: every Run is
// a span and a histogram Record, and sampled runs are profiled per operator.
// It is safe for concurrent use, as the underlying session is.
type DynamicSession struct {
	*core
	sess  *ort.DynamicAdvancedSession
	batch batchReader
}

// NewDynamicSession creates an ort.DynamicAdvancedSession for the model file
// and instruments it. sessOpts may be nil. With operator profiling on,
// sessOpts must stay valid until Close: profiled windows copy it.
func NewDynamicSession(ctx context.Context, modelPath string, inputNames, outputNames []string,
	sessOpts *ort.SessionOptions, opts ...Option) (*DynamicSession, error) {
	return newDynamic(ctx, model{path: modelPath}, inputNames, outputNames, sessOpts, opts)
}

// NewDynamicSessionWithONNXData is NewDynamicSession for a model held in memory.
func NewDynamicSessionWithONNXData(ctx context.Context, onnxData []byte, inputNames, outputNames []string,
	sessOpts *ort.SessionOptions, opts ...Option) (*DynamicSession, error) {
	return newDynamic(ctx, model{data: onnxData}, inputNames, outputNames, sessOpts, opts)
}

func newDynamic(ctx context.Context, m model, inputNames, outputNames []string,
	sessOpts *ort.SessionOptions, opts []Option) (*DynamicSession, error) {
	c := newCore(m.path, opts)
	create := func(o *ort.SessionOptions) (*ort.DynamicAdvancedSession, error) {
		if m.path != "" {
			return ort.NewDynamicAdvancedSession(m.path, inputNames, outputNames, o)
		}
		return ort.NewDynamicAdvancedSessionWithONNXData(m.data, inputNames, outputNames, o)
	}
	start := time.Now()
	sess, err := create(sessOpts)
	c.recordCreation(ctx, start, time.Now(), err)
	if err != nil {
		return nil, fmt.Errorf("create session for model %s: %w", m, err)
	}
	s := &DynamicSession{core: c, sess: sess}
	if info, err := m.inputInfo(); err == nil && len(info) > 0 && len(info[0].Dimensions) > 0 {
		s.batch.enabled = true
		s.batch.fixed = info[0].Dimensions[0]
	}
	c.gate = newGate(c.release(sess.Destroy))
	c.prof, _ = newProfiler(c, sessOpts, func(o *ort.SessionOptions) (profiledRunner, error) {
		ps, err := create(o)
		if err != nil {
			return nil, err
		}
		return dynRunner{ps}, nil
	}) // cannot fail: the model is known
	return s, nil
}

// WrapDynamic instruments a session created elsewhere; name it with
// WithModelName. Its creation time is not recorded. Operator profiling
// (WithProfiling, ProfileRuns) works per run on ONNX Runtime 1.25 and later;
// on 1.24, which can only profile a copy of the session built from the
// model, WrapDynamic with profiling enabled fails and ProfileRuns returns an
// error. Close destroys sess.
func WrapDynamic(sess *ort.DynamicAdvancedSession, opts ...Option) (*DynamicSession, error) {
	if sess == nil {
		return nil, errors.New("ortel: WrapDynamic: nil session")
	}
	c, err := wrapCore(opts, sess.Destroy)
	if err != nil {
		return nil, err
	}
	return &DynamicSession{core: c, sess: sess}, nil
}

// wrapCore builds the core of a wrapped session. Profiling needs per-run
// profiling there; asking for it without is an error, not a silent no-op.
func wrapCore(opts []Option, destroy func() error) (*core, error) {
	c := newCore("", opts)
	prof, err := newProfiler(c, nil, nil)
	if err != nil && c.cfg.profiling.enabled() {
		return nil, err
	}
	c.prof = prof // nil without per-run profiling: ProfileRuns says why
	c.wrapErr = err
	c.gate = newGate(c.release(destroy))
	return c, nil
}

// Run runs the model on inputs, writing outputs (nil outputs are allocated
// by ONNX Runtime, as with ort.DynamicAdvancedSession.Run), inside a run span
// that is a child of the span in ctx. A canceled ctx stops the run before it
// starts; a started run cannot be interrupted.
//
// Run is safe to call concurrently with Close: a Run that started first
// finishes normally, one that starts after Close returns ErrClosed.
func (s *DynamicSession) Run(ctx context.Context, inputs, outputs []ort.Value) error {
	if !s.gate.enter() {
		return ErrClosed
	}
	defer s.gate.exit()
	batch := s.batch.of(inputs)
	if p := s.prof; p != nil && p.sample() {
		return s.runProfiled(ctx, batch,
			func(ro *ort.RunOptions) error { return s.sess.RunWithOptions(inputs, outputs, ro) },
			func(r profiledRunner) error { return r.(dynRunner).s.Run(inputs, outputs) })
	}
	ctx, span := s.begin(ctx, batch, false)
	var err error
	start := time.Now()
	if err = ctx.Err(); err == nil {
		err = s.sess.Run(inputs, outputs)
	}
	end := time.Now()
	if err = s.end(ctx, span, start, end, err, false); err == nil && s.prof != nil {
		s.prof.plainRan(end.Sub(start))
	}
	return err
}

// Unwrap returns the underlying session.
func (s *DynamicSession) Unwrap() *ort.DynamicAdvancedSession { return s.sess }

// Close refuses new runs (they fail with ErrClosed), waits for the runs in
// flight to return, destroys the session and emits the operator spans still
// pending, all bounded by ctx. When ctx ends first, Close returns an error
// saying what is left, and the session is destroyed when its last run
// returns: it is never destroyed under a run. Calling Close again waits
// again. Close the session before shutting down the TracerProvider, or
// pending operator spans are dropped (counted in ProfilingStats().Lost).
func (s *DynamicSession) Close(ctx context.Context) error { return s.close(ctx) }

// AdvancedSession is an instrumented ort.AdvancedSession, whose input and
// output tensors are bound at creation. Like the session it wraps, it must
// not run concurrently with itself.
type AdvancedSession struct {
	*core
	sess  *ort.AdvancedSession
	batch int64
}

// NewAdvancedSession creates an ort.AdvancedSession bound to inputs and
// outputs and instruments it. sessOpts may be nil; with operator profiling
// on, it must stay valid until Close.
func NewAdvancedSession(ctx context.Context, modelPath string, inputNames, outputNames []string,
	inputs, outputs []ort.Value, sessOpts *ort.SessionOptions, opts ...Option) (*AdvancedSession, error) {
	return newAdvanced(ctx, model{path: modelPath}, inputNames, outputNames, inputs, outputs, sessOpts, opts)
}

// NewAdvancedSessionWithONNXData is NewAdvancedSession for a model held in memory.
func NewAdvancedSessionWithONNXData(ctx context.Context, onnxData []byte, inputNames, outputNames []string,
	inputs, outputs []ort.Value, sessOpts *ort.SessionOptions, opts ...Option) (*AdvancedSession, error) {
	return newAdvanced(ctx, model{data: onnxData}, inputNames, outputNames, inputs, outputs, sessOpts, opts)
}

func newAdvanced(ctx context.Context, m model, inputNames, outputNames []string,
	inputs, outputs []ort.Value, sessOpts *ort.SessionOptions, opts []Option) (*AdvancedSession, error) {
	c := newCore(m.path, opts)
	create := func(o *ort.SessionOptions) (*ort.AdvancedSession, error) {
		if m.path != "" {
			return ort.NewAdvancedSession(m.path, inputNames, outputNames, inputs, outputs, o)
		}
		return ort.NewAdvancedSessionWithONNXData(m.data, inputNames, outputNames, inputs, outputs, o)
	}
	start := time.Now()
	sess, err := create(sessOpts)
	c.recordCreation(ctx, start, time.Now(), err)
	if err != nil {
		return nil, fmt.Errorf("create session for model %s: %w", m, err)
	}
	s := &AdvancedSession{core: c, sess: sess, batch: batchOfValues(inputs)}
	// The batch size never changes: put it in the prebuilt options.
	c.startOpts, c.profOpts = c.buildStartOpts(s.batch)
	c.gate = newGate(c.release(sess.Destroy))
	c.prof, _ = newProfiler(c, sessOpts, func(o *ort.SessionOptions) (profiledRunner, error) {
		ps, err := create(o)
		if err != nil {
			return nil, err
		}
		return advRunner{ps}, nil
	}) // cannot fail: the model is known
	return s, nil
}

// WrapAdvanced instruments an AdvancedSession created elsewhere; see WrapDynamic.
func WrapAdvanced(sess *ort.AdvancedSession, opts ...Option) (*AdvancedSession, error) {
	if sess == nil {
		return nil, errors.New("ortel: WrapAdvanced: nil session")
	}
	c, err := wrapCore(opts, sess.Destroy)
	if err != nil {
		return nil, err
	}
	return &AdvancedSession{core: c, sess: sess, batch: -1}, nil
}

// Run runs the model on the bound tensors inside a run span.
// Run may be called concurrently with Close, not with itself.
func (s *AdvancedSession) Run(ctx context.Context) error {
	if !s.gate.enter() {
		return ErrClosed
	}
	defer s.gate.exit()
	if p := s.prof; p != nil && p.sample() {
		return s.runProfiled(ctx, -1,
			func(ro *ort.RunOptions) error { return s.sess.RunWithOptions(ro) },
			func(r profiledRunner) error { return r.(advRunner).s.Run() })
	}
	ctx, span := s.begin(ctx, -1, false)
	var err error
	start := time.Now()
	if err = ctx.Err(); err == nil {
		err = s.sess.Run()
	}
	end := time.Now()
	if err = s.end(ctx, span, start, end, err, false); err == nil && s.prof != nil {
		s.prof.plainRan(end.Sub(start))
	}
	return err
}

// Unwrap returns the underlying session.
func (s *AdvancedSession) Unwrap() *ort.AdvancedSession { return s.sess }

// Close is DynamicSession.Close for an AdvancedSession.
func (s *AdvancedSession) Close(ctx context.Context) error { return s.close(ctx) }

// SessionID returns the onnxruntime.session.id of the session.
func (c *core) SessionID() string { return c.id }

// ModelName returns the onnxruntime.model.name of the session.
func (c *core) ModelName() string { return c.cfg.modelName }

// ProfileRuns profiles the next n runs, whatever the sampling settings: each
// of them yields operator spans, emitted in the background once it returned;
// Flush waits for them. On ONNX Runtime 1.24 the profiled copy of the
// session is created before ProfileRuns returns (bounded by ctx).
// ProfileRuns is not rate-limited; see TriggerProfiling for triggers that
// come from outside the program.
func (c *core) ProfileRuns(ctx context.Context, n int) error {
	if c.gate.isClosed() {
		return ErrClosed
	}
	if c.prof == nil {
		return c.wrapErr
	}
	if n <= 0 {
		return nil
	}
	p := c.prof
	p.owed.Add(int64(n))
	if p.perRun {
		return nil
	}
	p.mu.Lock()
	p.prewarmLocked()
	ch, w := p.openDone, p.win
	p.mu.Unlock()
	if w != nil || ch == nil {
		return nil
	}
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	err := p.openErr
	p.mu.Unlock()
	return err
}

// TriggerProfiling profiles the next n runs (Profiling.TailRuns when n <= 0)
// unless a trigger was accepted less than Profiling.TriggerInterval ago
// (default 10s), in which case it returns ErrRateLimited. It never blocks:
// it is meant for triggers from outside the program (an HTTP endpoint, a
// signal). Slow runs (Profiling.SlowRun) share its rate limit.
func (c *core) TriggerProfiling(n int) error {
	if c.gate.isClosed() {
		return ErrClosed
	}
	if c.prof == nil {
		return c.wrapErr
	}
	if n <= 0 {
		n = c.prof.cfg.TailRuns
	}
	if !c.prof.trigger(n) {
		return ErrRateLimited
	}
	return nil
}

// Flush emits the operator spans of every profiled run that returned, and
// waits until they reached the TracerProvider or ctx is done. On ONNX
// Runtime 1.24 it closes the open profiled window if it served runs.
func (c *core) Flush(ctx context.Context) error {
	if c.prof == nil {
		return nil
	}
	return c.prof.flush(ctx)
}

// ProfilingStats says what operator profiling did for the session so far.
func (c *core) ProfilingStats() ProfilingStats {
	if c.prof == nil {
		return ProfilingStats{}
	}
	return c.prof.stats()
}

// batchReader finds the batch size of dynamic inputs: dimension 0 of the
// first input. Reading a shape copies it, so the last answer is cached per
// input value; the common loop that reuses its tensors then costs nothing.
type batchReader struct {
	enabled bool
	fixed   int64 // declared dimension 0; -1 when dynamic
	last    atomic.Pointer[batchEntry]
}

type batchEntry struct {
	v ort.Value
	n int64
}

func (b *batchReader) of(inputs []ort.Value) int64 {
	if !b.enabled || len(inputs) == 0 || inputs[0] == nil {
		return -1
	}
	if b.fixed >= 0 {
		return b.fixed
	}
	if e := b.last.Load(); e != nil && e.v == inputs[0] {
		return e.n
	}
	n := batchOfValues(inputs)
	b.last.Store(&batchEntry{v: inputs[0], n: n})
	return n
}

func batchOfValues(inputs []ort.Value) int64 {
	if len(inputs) == 0 || inputs[0] == nil {
		return -1
	}
	shape := inputs[0].GetShape()
	if len(shape) == 0 {
		return -1
	}
	return shape[0]
}
