// Package testenv holds helpers for ortel's tests that need real parts: the
// ONNX Runtime library and the fetched models. Locally such a test skips with
// a message saying how to fetch what it lacks; under CI=true it fails instead,
// so CI can never pass by skipping.
package testenv

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/ortlib"
)

// CI reports whether the tests run under continuous integration (CI=true).
func CI() bool {
	v := os.Getenv("CI")
	return v == "true" || v == "1"
}

// Missing skips the test locally and fails it under CI: for a test that
// needs a part (a library, a model, a tool) this machine lacks.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// RequireORT initializes ONNX Runtime or skips (locally) / fails (CI).
func RequireORT(t testing.TB) {
	t.Helper()
	if _, err := ortlib.Init(); err != nil {
		Missing(t, "needs the ONNX Runtime library: %v", err)
	}
}

// ORTLibrary returns the library file of ONNX Runtime release version
// (for example "1.24.3") as ortlib finds it, or skips (locally) / fails
// (CI) when it has not been fetched.
func ORTLibrary(t testing.TB, version string) string {
	t.Helper()
	lib, err := ortlib.Select(version)
	if err != nil {
		Missing(t, "needs ONNX Runtime %s: %v", version, err)
	}
	return lib.Path
}

// Model returns the path of a fetched model file (for example
// "ch_PP-OCRv4_det_infer.onnx") or skips (locally) / fails (CI) when it has
// not been fetched.
func Model(t testing.TB, file string) string {
	t.Helper()
	p := filepath.Join(ortlib.CacheDir(), "models", file)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "needs model %s (%v); fetch it with: ortel fetch model all (or make setup)", file, err)
	}
	return p
}

// Tool returns the path of a program on PATH, or skips (locally) / fails
// (CI) naming the script that installs it.
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "needs %s on PATH (install it with %s): %v", name, install, err)
	}
	return p
}

// Chromium returns the headless browser ($ORTEL_CHROMIUM, else Debian's
// chromium), or skips (locally) / fails (CI) saying how to install it.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, c := range []string{os.Getenv("ORTEL_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	Missing(t, "needs Chromium: install it with scripts/install-chromium.sh (Debian package chromium), or set ORTEL_CHROMIUM")
	return ""
}

// Gunzip returns the decompressed bytes of the gzip-compressed file path
// (the project keeps its real profile and report fixtures compressed).
func Gunzip(tb testing.TB, path string) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return b
}

// ErrContains fails t when err is not what a table test wants: nil when
// want is "", else an error whose message contains want. what names the
// call in the message ("Validate()").
func ErrContains(t testing.TB, what string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("%s = %v, want nil", what, err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("%s = %v, want an error containing %q", what, err, want)
	}
}
