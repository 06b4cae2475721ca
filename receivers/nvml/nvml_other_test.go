//go:build !linux || !cgo

package nvml

import (
	"errors"
	"testing"

	"github.com/ortel-dev/ortel/receivers"
)

func TestNewUnsupportedInThisBuild(t *testing.T) {
	r, err := New()
	if r != nil || !errors.Is(err, receivers.ErrUnsupported) {
		t.Fatalf("New() = %v, %v; want an error matching ErrUnsupported", r, err)
	}
}
