package ortenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Version is the ONNX Runtime release that scripts/fetch.sh pins.
const Version = "1.24.3"

// EnvLibraryPath names the environment variable that overrides where the
// ONNX Runtime shared library is loaded from.
const EnvLibraryPath = "ONNXRUNTIME_SHARED_LIBRARY_PATH"

// EnvCacheDir names the environment variable that overrides the project cache.
const EnvCacheDir = "ORTEL_CACHE_DIR"

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

// libNames are the file names the library goes by on this platform.
func libNames() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{"libonnxruntime.dylib", "libonnxruntime." + Version + ".dylib"}
	case "windows":
		return []string{"onnxruntime.dll"}
	default:
		return []string{"libonnxruntime.so.1", "libonnxruntime.so", "libonnxruntime.so." + Version}
	}
}

// CacheDir returns the project cache folder: $ORTEL_CACHE_DIR, else the
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
// *NotFoundError naming every place it looked.
func FindLibrary() (string, error) {
	var tried []string
	if p := os.Getenv(EnvLibraryPath); p != "" {
		if isFile(p) {
			return p, nil
		}
		// An explicit override that points nowhere is an error of its own:
		// silently falling back would load a different library than asked for.
		return "", fmt.Errorf("%s=%q: no such file", EnvLibraryPath, p)
	}
	tried = append(tried, "$"+EnvLibraryPath+" (not set)")
	dirs := []string{filepath.Join(CacheDir(), "onnxruntime", Version)}
	dirs = append(dirs, systemDirs()...)
	for _, d := range dirs {
		for _, n := range libNames() {
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
// safe to call many times; only the first call does the work, and later calls
// return its result. It returns the library path it loaded.
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
