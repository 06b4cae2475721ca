package instrument

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// gate counts the runs in flight and closes a session exactly once, after
// the last of them. ONNX Runtime must never see a session destroyed while a
// Run is inside it (that is a SIGSEGV, not an error), so Close only marks
// the session closed; whoever leaves it idle — Close itself, or the last run
// to return — destroys it.
//
// The Run path costs two atomic adds.
type gate struct {
	state   atomic.Int64  // closedBit | runs in flight
	idle    chan struct{} // closed once the session is closed and idle, after shutdown ran
	once    sync.Once
	closing sync.Once
	err     error        // shutdown's result, read after idle
	stop    func() error // releases the session; runs once
}

const closedBit = int64(1) << 62

func newGate(stop func() error) *gate {
	return &gate{idle: make(chan struct{}), stop: stop}
}

// enter admits a run; false once the session is closed.
func (g *gate) enter() bool {
	if g.state.Add(1)&closedBit != 0 {
		g.exit()
		return false
	}
	return true
}

// exit ends a run admitted by enter (or refused by it).
func (g *gate) exit() {
	if g.state.Add(-1) == closedBit {
		g.shutdown()
	}
}

func (g *gate) isClosed() bool { return g.state.Load()&closedBit != 0 }

func (g *gate) inFlight() int64 { return g.state.Load() &^ closedBit }

func (g *gate) shutdown() {
	g.once.Do(func() {
		g.err = g.stop()
		close(g.idle)
	})
}

// close refuses new runs and waits, bounded by ctx, until the runs in flight
// returned and the session was released. When ctx ends first the session is
// released by the last run to return, and close says so.
func (g *gate) close(ctx context.Context) error {
	g.closing.Do(func() {
		if g.state.Add(closedBit) == closedBit {
			g.shutdown()
		}
	})
	select {
	case <-g.idle:
		return g.err
	case <-ctx.Done():
	}
	select {
	case <-g.idle: // both ready: prefer the full answer
		return g.err
	default:
	}
	return fmt.Errorf("%d runs still in flight (the session is released when the last one returns): %w",
		g.inFlight(), ctx.Err())
}

// close closes the session: see DynamicSession.Close.
func (c *core) close(ctx context.Context) error {
	if err := c.gate.close(ctx); err != nil {
		return fmt.Errorf("ortel: close session of model %q: %w", c.cfg.modelName, err)
	}
	if c.prof == nil {
		return nil
	}
	return c.prof.wait(ctx)
}

// release runs once the session is closed and idle: it stops the profiler
// (reading what it holds in the background) and destroys the session.
func (c *core) release(destroy func() error) func() error {
	return func() error {
		var errs []error
		if c.prof != nil {
			c.prof.stop()
		}
		if destroy != nil {
			errs = append(errs, destroy())
		}
		return errors.Join(errs...)
	}
}
