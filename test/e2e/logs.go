package e2e

import (
	"bytes"
	"os"
)

// Tail returns the last n lines of a file ("" when it cannot be read).
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil || n <= 0 {
		return ""
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
