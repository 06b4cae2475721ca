package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
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

// TestRunOnDemand asks a running bench for 3 profiled runs in the middle of
// its measured phase: they are profiled (their operator spans are
// emitted), the report's operator table still holds only the pass's 2
// runs, and a note counts the 3. A bench asked nothing notes nothing.
func TestRunOnDemand(t *testing.T) {
	model := dynModel(t)
	for _, ask := range []bool{true, false} {
		t.Run(fmt.Sprintf("asked=%t", ask), func(t *testing.T) {
			tel := newTelemetry(t)
			od := &OnDemand{}
			var askErr error
			cfg := Config{ModelPath: model, Runs: 30, Warmup: 3, IntraOpThreads: 1, ProfileRuns: 2,
				MeterProvider: tel.mp, TracerProvider: tel.tp, OnDemand: od}
			cfg.runHook = func(seq int) {
				if ask && seq == 5 {
					askErr = od.Profile(3)
				}
			}
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if askErr != nil {
				t.Fatalf("Profile during the measured phase: %v", askErr)
			}
			if rep.Operators == nil || rep.Operators.ProfiledRuns != 2 {
				t.Errorf("operator table %+v, want the pass's 2 runs only", rep.Operators)
			}
			profiled := 0
			for _, s := range tel.spans.Ended() {
				if strings.HasPrefix(s.Name(), "run ") {
					for _, a := range s.Attributes() {
						if a.Key == semconv.OnnxruntimeRunProfiledKey && a.Value.AsBool() {
							profiled++
						}
					}
				}
			}
			notes := strings.Join(rep.Notes, "\n")
			want := 2
			if ask {
				want = 5
				if !strings.Contains(notes, "3 runs were profiled on demand") {
					t.Errorf("notes %q: want 3 runs profiled on demand", notes)
				}
			} else if strings.Contains(notes, "on demand") {
				t.Errorf("notes %q: nothing was asked on demand", notes)
			}
			if profiled != want {
				t.Errorf("%d profiled run spans, want %d", profiled, want)
			}
		})
	}
}
