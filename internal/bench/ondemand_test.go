package bench

import (
	"errors"
	"testing"
)

func TestOnDemandRefusesWithoutSessions(t *testing.T) {
	var od OnDemand
	if err := od.Profile(3); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Profile before the sessions open: %v, want ErrNotRunning", err)
	}
	for _, n := range []int{0, -1, MaxOnDemandRuns + 1} {
		if err := od.Profile(n); err == nil || errors.Is(err, ErrNotRunning) {
			t.Errorf("Profile(%d): %v, want a bad-count error", n, err)
		}
	}
	var nilOD *OnDemand
	nilOD.attach(nil) // a bench without on-demand profiling
	nilOD.detach()
}
