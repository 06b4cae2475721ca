package profile

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestErrorMessages(t *testing.T) {
	se := &SyntaxError{Offset: 1234, Msg: "expected ',' or ']' after an event, found '{'"}
	if got, want := se.Error(), "profile JSON at byte 1234: expected ',' or ']' after an event, found '{'"; got != want {
		t.Errorf("SyntaxError.Error() = %q, want %q", got, want)
	}
	w := Warning{Offset: 7, Msg: "trailing comma after the last event: ignored"}
	if got, want := w.String(), "byte 7: trailing comma after the last event: ignored"; got != want {
		t.Errorf("Warning.String() = %q, want %q", got, want)
	}
	re := &readError{off: 9, err: io.ErrUnexpectedEOF}
	if !errors.Is(re, io.ErrUnexpectedEOF) || re.Error() != "read profile at byte 9: unexpected EOF" {
		t.Errorf("readError: %q", re)
	}
	wrapped := fmt.Errorf("read profile %q: %w", "x.json", ErrEmpty)
	if !errors.Is(wrapped, ErrEmpty) || !strings.HasPrefix(ErrEmpty.Error(), "profile is empty: ") {
		t.Errorf("ErrEmpty: %v", wrapped)
	}
	for _, m := range []string{msgTruncEvent, msgTruncArray, msgTruncTopLevel} {
		if !strings.Contains(m, "truncated") || !strings.Contains(m, "destroyed") {
			t.Errorf("truncation message %q does not say what happened and why", m)
		}
	}
}
