package bench

import (
	"errors"
	"fmt"
	"sync"

	"github.com/ortel-dev/ortel/instrument"
)

// MaxOnDemandRuns bounds the runs one on-demand request may profile.
const MaxOnDemandRuns = 1000

// ErrNotRunning is returned by OnDemand.Profile when no measured session is
// open: the bench has not created them yet, or has closed them.
var ErrNotRunning = errors.New("no measured session is open (the bench is loading or has finished)")

// OnDemand lets something outside a running bench (ortel bench's SIGUSR1,
// the live view's POST /api/v1/profile) profile the bench's next runs. Put
// it in Config.OnDemand; the bench attaches its sessions while they are
// open. The operator spans of those runs are emitted like any profiled
// run's and reach the live view's timeline; they are not counted in the
// report's operator table, which comes from the separate profiling pass,
// and the report notes how many runs were profiled on demand (their
// latency is in the measured figures). Safe for concurrent use.
type OnDemand struct {
	mu       sync.Mutex
	sessions []*instrument.DynamicSession
}

// Profile profiles the next runs runs of every open session (1 to
// MaxOnDemandRuns). Requests are rate-limited by each session's trigger
// interval (instrument.DefaultTriggerInterval): a request that comes
// sooner returns an error wrapping instrument.ErrRateLimited.
func (o *OnDemand) Profile(runs int) error {
	if runs < 1 || runs > MaxOnDemandRuns {
		return fmt.Errorf("runs to profile on demand: %d, want 1 to %d", runs, MaxOnDemandRuns)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.sessions) == 0 {
		return ErrNotRunning
	}
	var errs []error
	for _, s := range o.sessions {
		if err := s.TriggerProfiling(runs); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(o.sessions) {
		return errs[0] // every session refused: rate-limited or closed
	}
	return nil
}

// attach makes the bench's sessions the ones Profile profiles.
func (o *OnDemand) attach(sessions []*instrument.DynamicSession) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.sessions = append(o.sessions[:0], sessions...)
	o.mu.Unlock()
}

// detach forgets the sessions before they close.
func (o *OnDemand) detach() {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.sessions = nil
	o.mu.Unlock()
}
