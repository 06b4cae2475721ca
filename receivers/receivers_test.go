package receivers

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestUnsupportedError(t *testing.T) {
	err := Unsupported("rapl", "no powercap zones", os.ErrNotExist)
	wrapped := fmt.Errorf("agent: %w", err)
	if !errors.Is(wrapped, ErrUnsupported) {
		t.Error("errors.Is(err, ErrUnsupported) is false")
	}
	if !errors.Is(wrapped, os.ErrNotExist) {
		t.Error("the underlying error is lost")
	}
	var ue *UnsupportedError
	if !errors.As(wrapped, &ue) || ue.Source != "rapl" {
		t.Error("errors.As does not find the source")
	}
	if msg := err.Error(); !strings.Contains(msg, "rapl") || !strings.Contains(msg, "no powercap zones") {
		t.Errorf("message %q lacks the source or reason", msg)
	}
	if errors.Is(errors.New("other"), ErrUnsupported) {
		t.Error("an unrelated error matches ErrUnsupported")
	}
}
