package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestTail(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("a\nb\nc\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n    int
		want string
	}{
		{0, ""}, {1, "d"}, {2, "c\nd"}, {4, "a\nb\nc\nd"}, {10, "a\nb\nc\nd"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			if got := Tail(p, tt.n); got != tt.want {
				t.Errorf("Tail(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
	if Tail(filepath.Join(t.TempDir(), "missing"), 3) != "" {
		t.Error("a missing file must give an empty tail")
	}
}
