// Package ortlib finds the ONNX Runtime shared library and initializes the
// ONNX Runtime environment (github.com/yalue/onnxruntime_go) once per
// process, so a program can create sessions with one call:
//
//	if _, err := ortlib.Init(); err != nil {
//		log.Fatal(err) // says where it looked and how to fetch the library
//	}
//
// The library is looked for (see Locate for the details), in order: the
// file named by ONNXRUNTIME_SHARED_LIBRARY_PATH; the ortel cache
// ($ORTEL_CACHE_DIR/onnxruntime/<version>/, where `ortel fetch ort` puts it;
// the version is $ORTEL_ONNXRUNTIME_VERSION or DefaultVersion, and
// ORTEL_CACHE_DIR defaults to the .cache/ortel folder of the enclosing ortel
// checkout, then to $XDG_CACHE_HOME/ortel, ~/.cache/ortel); an active Python
// environment's pip package onnxruntime; an npm package onnxruntime-node in
// node_modules of the working directory or its parents; the user's pip
// packages; global npm packages; system pip packages; the system library
// paths (LD_LIBRARY_PATH, /usr/local/lib, /usr/lib, ...). A release older
// than MinVersion is passed over; Init reads the loaded library's own
// version and Loaded says what was loaded, from where, with any warning.
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

// FetchHint is the command that fetches the pinned library into the ortel
// cache (`ortel fetch ort --version 1.24.3` for another release).
const FetchHint = "ortel fetch ort"

// NotFoundError reports that the ONNX Runtime library was not found, with
// every place that was looked at.
type NotFoundError struct {
	Tried []string
	// Skipped lists libraries found but passed over, each with why.
	Skipped []string
}

func (e *NotFoundError) Error() string {
	var b strings.Builder
	b.WriteString("ONNX Runtime shared library not found; looked in:\n")
	for _, t := range e.Tried {
		b.WriteString("  - ")
		b.WriteString(t)
		b.WriteByte('\n')
	}
	if len(e.Skipped) > 0 {
		b.WriteString("found but passed over:\n")
		for _, t := range e.Skipped {
			b.WriteString("  - ")
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "fetch it with: %s (or pip install onnxruntime, or npm install onnxruntime-node in your project: both are found), or set %s to the library file", FetchHint, EnvLibraryPath)
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

// FindLibrary returns the path of the ONNX Runtime shared library Locate
// chooses, or a *NotFoundError naming every place it looked. An
// EnvLibraryPath that names no file is an error of its own: loading another
// library than the one asked for would surprise.
func FindLibrary() (string, error) {
	lib, err := Locate()
	return lib.Path, err
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

var (
	initOnce sync.Once
	initPath string
	initErr  error
	loadedMu sync.Mutex
	loaded   Library
	// chosen is the library Use asked for (nil: Locate's choice); ran
	// says Init's work is done. Both under loadedMu.
	chosen *Library
	ran    bool
)

// Use makes Init load lib (see Select) instead of Locate's choice. One
// process holds one ONNX Runtime: once Init has loaded another library,
// Use fails and says which is loaded.
func Use(lib Library) error {
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if !ran {
		chosen = &lib
		return nil
	}
	if initErr == nil && (initPath == lib.Path || SameFile(initPath, lib.Path)) {
		return nil
	}
	held := initPath
	if initErr != nil {
		held = "nothing (it failed: " + initErr.Error() + ")"
	}
	return fmt.Errorf("ONNX Runtime %s cannot be loaded: this process has loaded %s already, and holds one ONNX Runtime", lib.Path, held)
}

// Loaded returns the library Init loaded: its path, where it was found, its
// version as the library itself reports it, and a Note when that version is
// not one ortel is tested with. It is the zero Library before Init, after a
// failed Init, or when the caller initialized ONNX Runtime itself.
func Loaded() Library {
	loadedMu.Lock()
	defer loadedMu.Unlock()
	return loaded
}

// Init finds the library and initializes the ONNX Runtime environment. It is
// safe to call many times and from many goroutines; only the first call does
// the work, and later calls return its result: the library path it loaded,
// or "(initialized by the caller)" when ONNX Runtime was already initialized.
func Init() (string, error) {
	initOnce.Do(func() {
		loadedMu.Lock()
		want := chosen
		loadedMu.Unlock()
		defer func() {
			loadedMu.Lock()
			ran = true
			loadedMu.Unlock()
		}()
		if ort.IsInitialized() {
			initPath = "(initialized by the caller)"
			return
		}
		lib, err := Locate()
		if want != nil {
			lib, err = *want, nil
		}
		if err != nil {
			initErr = err
			return
		}
		ort.SetSharedLibraryPath(lib.Path)
		if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
			initErr = fmt.Errorf("load ONNX Runtime from %q (%s): %w", lib.Path, lib.Source, err)
			if strings.Contains(err.Error(), "OrtGetApiBase") {
				initErr = fmt.Errorf("%q is not an ONNX Runtime library (it has no OrtGetApiBase): %w", lib.Path, err)
			}
			return
		}
		loadedMu.Lock()
		loaded, initPath = withLoadedVersion(lib, ort.GetVersion()), lib.Path
		loadedMu.Unlock()
	})
	return initPath, initErr
}

// withLoadedVersion takes the version the loaded library reports
// (GetVersionString) over the one its file name or package claimed, and
// says so when they differ.
func withLoadedVersion(lib Library, got string) Library {
	if got == "" {
		return lib
	}
	claimed := lib.Version
	lib.Version = got
	lib.Note, _ = CheckVersion(got) // older ones fail to initialize
	if claimed != "" && claimed != got {
		mismatch := fmt.Sprintf("the package says %s but the library reports %s", claimed, got)
		if lib.Note == "" {
			lib.Note = mismatch
		} else {
			lib.Note = mismatch + "; " + lib.Note
		}
	}
	return lib
}
