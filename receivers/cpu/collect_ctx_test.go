//go:build linux

package cpu

import (
	"testing"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

// TestCollectHonoursContext: a cancelled collection reads and observes
// nothing and says why.
func TestCollectHonoursContext(t *testing.T) {
	r, err := New(WithRoot("testdata/xeon4"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(t.Context())
	procfstest.CollectHonoursContext(t, r.collect)
}
