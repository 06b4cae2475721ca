package procfs

import (
	"strings"
	"testing"
)

func TestTruncate(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct{ name, in, want string }{
		{"short", "short", "short"},
		{"80 bytes", long[:80], long[:80]},
		{"100 bytes", long, long[:80] + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Truncate([]byte(tt.in)); got != tt.want {
				t.Errorf("Truncate(%d bytes) = %q", len(tt.in), got)
			}
		})
	}
}
