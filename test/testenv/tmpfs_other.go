//go:build !linux

package testenv

import "testing"

// Tmpfs skips (or fails under CI): mounting a tmpfs needs Linux.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	Missing(t, "needs Linux to mount a tmpfs to fill it (a full disk)")
	return ""
}

// Fill is not reached off Linux (Tmpfs skipped the test).
func Fill(t testing.TB, dir string) string { return "" }
