package ortlib

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSelect: --ort's value is a release looked up in the ortel cache (a
// release not there says how to fetch it) or a library file (a missing
// one, or a folder, is said plainly).
func TestSelect(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(EnvCacheDir, cache)
	for _, v := range []string{"1.24.3", "1.26.1", "1.30.0"} {
		dir := filepath.Join(cache, "onnxruntime", v)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "libonnxruntime.so.1"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := Select("1.26.1")
	if want := filepath.Join(cache, "onnxruntime", "1.26.1", "libonnxruntime.so.1"); err != nil || lib.Path != want || lib.Version != "1.26.1" {
		t.Errorf("Select(1.26.1) = %+v, %v; want %s", lib, err, want)
	}
	if got := CachedReleases(); !slices.Equal(got, []string{"1.30.0", "1.26.1", "1.24.3"}) {
		t.Errorf("CachedReleases() = %v, want newest first", got)
	}
	file := filepath.Join(cache, "onnxruntime", "1.24.3", "libonnxruntime.so.1")
	if lib, err := Select(file); err != nil || lib.Path != file {
		t.Errorf("Select(%s) = %+v, %v", file, lib, err)
	}
	for _, c := range []struct{ spec, want string }{
		{"1.27.0", "fetch it with: ortel fetch ort --version 1.27.0"},
		{"1.20.0", "older than 1.24"},
		{filepath.Join(cache, "nope.so"), "no such file"},
		{filepath.Join(cache, "onnxruntime"), "is a folder"},
	} {
		if _, err := Select(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Select(%s): error %v, want %q", c.spec, err, c.want)
		}
	}
	if !SameFile(file, file) || SameFile(file, filepath.Join(cache, "onnxruntime", "1.30.0", "libonnxruntime.so.1")) {
		t.Error("SameFile is wrong about one file and two")
	}
}
