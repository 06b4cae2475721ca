package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/metric"
)

// Callback is a receiver's registered callback, the lock that the callback
// and the receiver's other methods keep the receiver's state under, and
// whether the receiver is down. The zero value is ready to use; it must
// not be copied.
//
// A receiver registers its callback with RegisterLocked, which runs it
// under the lock and not at all once the receiver is down, and its
// Shutdown is r.cb.Shutdown("source", r.release).
type Callback struct {
	mu   sync.Mutex
	down bool
	reg  metric.Registration
}

// Register registers f as the callback observing the instruments of in.
// It returns in's creation errors instead, if any, and registers nothing
// when in is empty (every metric turned off). source names the receiver
// in errors: "cpu".
func (c *Callback) Register(source string, in *Instruments, f metric.Callback) error {
	if err := in.Err(source); err != nil {
		return err
	}
	if in.Len() == 0 {
		return nil // every metric turned off: nothing to observe
	}
	reg, err := in.meter.RegisterCallback(f, in.list...)
	if err != nil {
		return fmt.Errorf("%s: register the callback: %w", source, err)
	}
	c.mu.Lock()
	c.reg = reg
	c.mu.Unlock()
	return nil
}

// RegisterLocked is Register for a callback that observes the receiver's
// state: f runs holding the lock, and not at all once Stop or Shutdown
// has been called (the collection then observes nothing).
func (c *Callback) RegisterLocked(source string, in *Instruments, f metric.Callback) error {
	return c.Register(source, in, func(ctx context.Context, o metric.Observer) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.down {
			return nil
		}
		return f(ctx, o)
	})
}

// Lock locks the receiver's state.
func (c *Callback) Lock() { c.mu.Lock() }

// Unlock unlocks the receiver's state.
func (c *Callback) Unlock() { c.mu.Unlock() }

// Down reports whether Stop or Shutdown has been called: the callback
// then observes nothing. Callers hold the lock.
func (c *Callback) Down() bool { return c.down }

// Stop marks the receiver down, so that the callback observes nothing from
// now on, and unregisters the callback. It reports whether this call
// stopped it: a later call does nothing and returns false and nil.
//
// It unregisters outside the lock: the SDK holds its own lock while it
// runs the callback, which takes ours, so unregistering while holding ours
// would deadlock against a collection in progress.
func (c *Callback) Stop() (bool, error) {
	c.mu.Lock()
	if c.down {
		c.mu.Unlock()
		return false, nil
	}
	c.down = true
	reg := c.reg
	c.reg = nil
	c.mu.Unlock()

	if reg == nil {
		return true, nil
	}
	return true, reg.Unregister()
}

// Shutdown stops the callback (see Stop), then calls release under the
// lock to free what the receiver holds: open files, perf events. It is
// safe to call more than once: a later call does nothing and returns nil.
// Errors are prefixed with source: "cpu: shutdown: ...".
func (c *Callback) Shutdown(source string, release func() error) error {
	first, err := c.Stop()
	if !first {
		return nil
	}
	c.mu.Lock()
	err = errors.Join(err, release())
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: shutdown: %w", source, err)
	}
	return nil
}
