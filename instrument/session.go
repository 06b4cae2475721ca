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
	c.prof = newProfiler(c, sessOpts, func(o *ort.SessionOptions) (profiledRunner, error) {
		ps, err := create(o)
		if err != nil {
			return nil, err
		}
		return dynRunner{ps}, nil
	})
	return s, nil
}

// WrapDynamic instruments a session created elsewhere. Session creation time
// and operator profiling are not available for it (the model is unknown);
// name it with WithModelName.
func WrapDynamic(sess *ort.DynamicAdvancedSession, opts ...Option) (*DynamicSession, error) {
	if sess == nil {
		return nil, errors.New("ortel: WrapDynamic: nil session")
	}
	c := newCore("", opts)
	return &DynamicSession{core: c, sess: sess}, nil
}

// Run runs the model on inputs, writing outputs (nil outputs are allocated
// by ONNX Runtime, as with ort.DynamicAdvancedSession.Run), inside a run span
// that is a child of the span in ctx. A canceled ctx stops the run before it
// starts; a started run cannot be interrupted.
func (s *DynamicSession) Run(ctx context.Context, inputs, outputs []ort.Value) error {
	if s.closed.Load() {
		return ErrClosed
	}
	batch := s.batch.of(inputs)
	if p := s.prof; p != nil && p.sample() {
		if w := p.acquire(); w != nil {
			return s.runProfiled(ctx, w, batch, func(r profiledRunner) error {
				return r.(dynRunner).s.Run(inputs, outputs)
			})
		}
	}
	ctx, span := s.begin(ctx, batch, false)
	var err error
	start := time.Now()
	if err = ctx.Err(); err == nil {
		err = s.sess.Run(inputs, outputs)
	}
	return s.end(ctx, span, start, time.Now(), err, false)
}

// Unwrap returns the underlying session.
func (s *DynamicSession) Unwrap() *ort.DynamicAdvancedSession { return s.sess }

// Close flushes pending operator spans (bounded by ctx), destroys the
// session and stops its metrics. Runs after Close fail with ErrClosed.
func (s *DynamicSession) Close(ctx context.Context) error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	if s.prof != nil {
		errs = append(errs, s.prof.close(ctx))
	}
	errs = append(errs, s.sess.Destroy())
	return errors.Join(errs...)
}

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
	c.prof = newProfiler(c, sessOpts, func(o *ort.SessionOptions) (profiledRunner, error) {
		ps, err := create(o)
		if err != nil {
			return nil, err
		}
		return advRunner{ps}, nil
	})
	return s, nil
}

// WrapAdvanced instruments an AdvancedSession created elsewhere; see WrapDynamic.
func WrapAdvanced(sess *ort.AdvancedSession, opts ...Option) (*AdvancedSession, error) {
	if sess == nil {
		return nil, errors.New("ortel: WrapAdvanced: nil session")
	}
	c := newCore("", opts)
	return &AdvancedSession{core: c, sess: sess, batch: -1}, nil
}

// Run runs the model on the bound tensors inside a run span.
func (s *AdvancedSession) Run(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if p := s.prof; p != nil && p.sample() {
		if w := p.acquire(); w != nil {
			return s.runProfiled(ctx, w, -1, func(r profiledRunner) error {
				return r.(advRunner).s.Run()
			})
		}
	}
	ctx, span := s.begin(ctx, -1, false)
	var err error
	start := time.Now()
	if err = ctx.Err(); err == nil {
		err = s.sess.Run()
	}
	return s.end(ctx, span, start, time.Now(), err, false)
}

// Unwrap returns the underlying session.
func (s *AdvancedSession) Unwrap() *ort.AdvancedSession { return s.sess }

// Close flushes pending operator spans (bounded by ctx), destroys the
// session and stops its metrics.
func (s *AdvancedSession) Close(ctx context.Context) error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	var errs []error
	if s.prof != nil {
		errs = append(errs, s.prof.close(ctx))
	}
	errs = append(errs, s.sess.Destroy())
	return errors.Join(errs...)
}

// SessionID returns the onnxruntime.session.id of the session.
func (c *core) SessionID() string { return c.id }

// ModelName returns the onnxruntime.model.name of the session.
func (c *core) ModelName() string { return c.cfg.modelName }

// ProfileRuns profiles the next n runs: it opens a profiled window now (the
// profiled copy of the session is created before it returns) and routes the
// next n runs through it, whatever the sampling settings. Their operator
// spans are emitted when the n-th run ends; Flush waits for that.
func (c *core) ProfileRuns(ctx context.Context, n int) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if c.prof == nil {
		return errors.New("ortel: operator profiling needs a session built from a model (not wrapped)")
	}
	return c.prof.force(ctx, n)
}

// Flush waits until every closed profiling window has been read and its
// operator spans emitted, or ctx is done. An open window stays open.
func (c *core) Flush(ctx context.Context) error {
	if c.prof == nil {
		return nil
	}
	return c.prof.wait(ctx)
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
