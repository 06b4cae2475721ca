package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new folder and returns the
// folder, unmounted when the test ends: a small file system to fill, for
// tests of what a full disk does. Mounting needs root (or CAP_SYS_ADMIN):
// without it the test skips saying so, or fails under CI.
func Tmpfs(t testing.TB, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		Missing(t, "needs to mount a %d-byte tmpfs to fill it (a full disk), which takes root: mount: %v", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount the test's tmpfs %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file of zeros into dir until its file system is full and
// returns the file's path: remove it to free the space again.
func Fill(t testing.TB, dir string) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "fill-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	for len(buf) > 1 { // the last partial block
		buf = buf[:len(buf)/2]
		for {
			if _, err := f.Write(buf); err != nil {
				break
			}
		}
	}
	return f.Name()
}
