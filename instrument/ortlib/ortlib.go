// Package ortlib finds the ONNX Runtime shared library and initializes the
// ONNX Runtime environment (github.com/yalue/onnxruntime_go) once per
// process, so a program can create sessions with one call:
//
//	if _, err := ortlib.Init(); err != nil {
//		log.Fatal(err) // says where it looked and how to fetch the library
//	}
//
// The library is looked for, in order:
//
//  1. the file named by ONNXRUNTIME_SHARED_LIBRARY_PATH;
//  2. the ortel cache: $ORTEL_CACHE_DIR/onnxruntime/<version>/, where the
//     version is $ORTEL_ONNXRUNTIME_VERSION or DefaultVersion and
//     ORTEL_CACHE_DIR defaults to the .cache/ortel folder of the enclosing
//     ortel checkout, then to $XDG_CACHE_HOME/ortel (~/.cache/ortel);
//  3. the system library paths (LD_LIBRARY_PATH, /usr/local/lib, /usr/lib, ...).
//
// When none of these holds the library, the error lists every place that was
// looked at and the command that fetches it. A program that initializes ONNX
// Runtime itself (ort.SetSharedLibraryPath + ort.InitializeEnvironment) does
// not need this package: Init then does nothing.
//
// Operator profiling per run (instrument.Profiling) needs ONNX Runtime 1.25
// or later; DefaultVersion is such a release. With 1.24 sessions fall back to
// profiled session copies.
package ortlib

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// DefaultVersion is the ONNX Runtime release looked for in the cache.
const DefaultVersion = "1.30.0"

// SupportedVersions are the releases ortel is tested with. The Go binding
// (C API 24) works with any release from 1.24 on.
var SupportedVersions = []string{"1.30.0", "1.24.3"}

// Environment variables read by FindLibrary.
const (
	// EnvLibraryPath names the library file to load, overriding every search.
	EnvLibraryPath = "ONNXRUNTIME_SHARED_LIBRARY_PATH"
	// EnvCacheDir overrides the ortel cache folder.
	EnvCacheDir = "ORTEL_CACHE_DIR"
	// EnvVersion picks the release looked for in the cache (default
	// DefaultVersion), for example 1.24.3.
	EnvVersion = "ORTEL_ONNXRUNTIME_VERSION"
)

// FetchHint is the command that fetches the library and models.
const FetchHint = "make setup (or scripts/fetch.sh all) from the ortel checkout"

// NotFoundError reports that the ONNX Runtime library was not found, with
// every place that was looked at.
type NotFoundError struct {
	Tried []string
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("ONNX Runtime shared library not found; looked in:\n")
	for _, t := range e.Tried {
		b.WriteString("  - ")
		b.WriteString(t)
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "fetch it with: %s, or set %s to the library file", FetchHint, EnvLibraryPath)
	return b.String()
}

// Version returns the release looked for in the cache: $ORTEL_ONNXRUNTIME_VERSION
// or DefaultVersion.
func Version() string {
	if v := os.Getenv(EnvVersion); v != "" {
		return v
	}
	return DefaultVersion
}

// libNames are the file names the library goes by on this platform.
func libNames(version string) []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"libonnxruntime.dylib", "libonnxruntime." + version + ".dylib"}
	case "windows":
		return []string{"onnxruntime.dll"}
	default:
		return []string{"libonnxruntime.so.1", "libonnxruntime.so", "libonnxruntime.so." + version}
	}
}

// CacheDir returns the ortel cache folder: $ORTEL_CACHE_DIR, else the
// .cache/ortel folder of the ortel checkout enclosing the working directory,
// else $XDG_CACHE_HOME/ortel or ~/.cache/ortel.
func CacheDir() string {
	if d := os.Getenv(EnvCacheDir); d != "" {
		return d
	}
	if root := checkoutRoot(); root != "" {
		return filepath.Join(root, ".cache", "ortel")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ortel")
	}
	return filepath.Join(os.TempDir(), "ortel-cache")
}

// checkoutRoot walks up from the working directory to the folder holding
// ortel's go.mod, or returns "".
func checkoutRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/ortel-dev/ortel\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// systemDirs are the folders searched last, in order.
func systemDirs() []string {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("LD_LIBRARY_PATH")) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return append(dirs, "/usr/local/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/opt/onnxruntime/lib")
}

// FindLibrary returns the path of the ONNX Runtime shared library, or a
// *NotFoundError naming every place it looked. An EnvLibraryPath that names
// no file is an error of its own: loading another library than the one
// asked for would surprise.
func FindLibrary() (string, error) {
	var tried []string
	if p := os.Getenv(EnvLibraryPath); p != "" {
		if isFile(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%q: no such file", EnvLibraryPath, p)
	}
	tried = append(tried, "$"+EnvLibraryPath+" (not set)")
	v := Version()
	dirs := []string{filepath.Join(CacheDir(), "onnxruntime", v)}
	dirs = append(dirs, systemDirs()...)
	for _, d := range dirs {
		for _, n := range libNames(v) {
			p := filepath.Join(d, n)
			if isFile(p) {
				return p, nil
			}
			tried = append(tried, p)
		}
	}
	return "", &NotFoundError{Tried: tried}
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

var (
	initOnce sync.Once
	initPath string
	initErr  error
)

// Init finds the library and initializes the ONNX Runtime environment. It is
// safe to call many times and from many goroutines; only the first call does
// the work, and later calls return its result: the library path it loaded,
// or "(initialized by the caller)" when ONNX Runtime was already initialized.
func Init() (string, error) {
	initOnce.Do(func() {
		if ort.IsInitialized() {
			initPath = "(initialized by the caller)"
			return
		}
		p, err := FindLibrary()
		if err != nil {
			initErr = err
			return
		}
		ort.SetSharedLibraryPath(p)
		if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
			initErr = fmt.Errorf("load ONNX Runtime from %q: %w", p, err)
			return
		}
		initPath = p
	})
	return initPath, initErr
}
