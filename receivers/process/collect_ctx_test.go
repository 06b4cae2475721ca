//go:build linux

package process

import (
	"context"
	"errors"
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestCollectHonoursContext: a cancelled collection reads and observes
// nothing and says why.
func TestCollectHonoursContext(t *testing.T) {
	r, err := New(WithRoot("testdata/two"), WithPIDs(100))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(t.Context())
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var o procfstest.Observer
	if err := r.collect(ctx, &o); !errors.Is(err, context.Canceled) {
		t.Errorf("collect = %v, want context.Canceled", err)
	}
	if o.N != 0 {
		t.Errorf("%d observations after cancellation", o.N)
	}
	if err := r.collect(t.Context(), &o); err != nil || o.N == 0 {
		t.Errorf("next collection: %v, %d observations", err, o.N)
	}
}
