package bench

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ortel-dev/ortel/instrument"
)

// TestErrorType: a failed request's error.type is the one instrument gives
// the run (a *RunError's Type, also wrapped), the context's and a closed
// session's names, else the Go type, as the OpenTelemetry conventions say.
// Planted: without the context.Canceled case a canceled request got
// "*errors.errorString".
func TestErrorType(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"run error", &instrument.RunError{Type: "invalid_argument", Err: errors.New("bad rank")}, "invalid_argument"},
		{"wrapped run error", fmt.Errorf("request 3: %w", &instrument.RunError{Type: "ort_error", Err: errors.New("x")}), "ort_error"},
		{"canceled", fmt.Errorf("run: %w", context.Canceled), "canceled"},
		{"deadline", context.DeadlineExceeded, "deadline_exceeded"},
		{"closed", fmt.Errorf("run: %w", instrument.ErrClosed), "session_closed"},
		{"other", errors.New("boom"), "*errors.errorString"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorType(tc.err); got != tc.want {
				t.Errorf("errorType(%v) = %q, want %q", tc.err, got, tc.want)
			}
		})
	}
}
