// Package ortapi reaches the few ONNX Runtime C API functions that the Go
// binding (github.com/yalue/onnxruntime_go v1.27.0, C API 24) does not wrap:
// run-level profiling, added in ONNX Runtime 1.25 (C API 25) as
// RunOptionsEnableProfiling and RunOptionsDisableProfiling.
//
// It finds the ONNX Runtime library the binding already loaded in this
// process (it never loads one itself), asks it for its API table at version
// 25 and calls the two functions through it (Linux only: other systems
// report ErrUnsupported and fall back). A library older than 1.25
// answers no table for version 25: RunProfiling then reports ErrUnsupported
// and callers fall back to session-level profiling.
package ortapi

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	ort "github.com/yalue/onnxruntime_go"
)

// ErrUnsupported says the loaded ONNX Runtime has no run-level profiling
// (it is older than 1.25), or none is loaded.
var ErrUnsupported = errors.New("run-level profiling needs ONNX Runtime 1.25 or later")

// APIVersion is the C API version whose table holds run-level profiling.
const APIVersion = 25

// Indices of the two functions in the OrtApi table, counted in pointers from
// its start. The table of C API 24 (ONNX Runtime 1.24, the header the Go
// binding ships) has 415 entries, the last being
// GetTensorElementTypeAndShapeDataReference; C API 25 appends
// RunOptionsEnableProfiling and then RunOptionsDisableProfiling. Tables only
// ever grow at the end, so these hold for every later version. A test checks
// the count against the binding's header.
const (
	api24Entries         = 415
	idxEnableRunProfile  = api24Entries
	idxDisableRunProfile = api24Entries + 1
)

var (
	loadOnce sync.Once
	loadErr  error
	version  string
)

// RunProfiling reports whether run-level profiling is available: nil when
// the loaded library is ONNX Runtime 1.25 or later, else an error wrapping
// ErrUnsupported that says why. ONNX Runtime must be initialized first
// (ort.InitializeEnvironment); the answer is computed once.
func RunProfiling() error {
	if !ort.IsInitialized() {
		return fmt.Errorf("%w: ONNX Runtime is not initialized", ErrUnsupported)
	}
	loadOnce.Do(func() {
		if err := runOptionsLayout(); err != nil {
			loadErr = err
			return
		}
		version, loadErr = load()
	})
	return loadErr
}

// LibraryVersion returns the version string of the loaded ONNX Runtime
// ("1.30.0"), or "" before RunProfiling found the library.
func LibraryVersion() string {
	RunProfiling()
	return version
}

// EnableRunProfiling turns profiling on for the runs that use ro: each such
// run writes its own profile, <prefix>_<timestamp>.json, when it ends.
func EnableRunProfiling(ro *ort.RunOptions, prefix string) error {
	if err := RunProfiling(); err != nil {
		return err
	}
	p, err := runOptionsPtr(ro)
	if err != nil {
		return err
	}
	return enable(p, prefix)
}

// DisableRunProfiling turns profiling off again for the runs that use ro.
func DisableRunProfiling(ro *ort.RunOptions) error {
	if err := RunProfiling(); err != nil {
		return err
	}
	p, err := runOptionsPtr(ro)
	if err != nil {
		return err
	}
	return disable(p)
}

// runOptionsLayout checks that ort.RunOptions still holds exactly one field,
// the OrtRunOptions pointer, which is what runOptionsPtr reads. A binding
// that changed it gets a clear error instead of a wrong pointer.
func runOptionsLayout() error {
	t := reflect.TypeFor[ort.RunOptions]()
	if t.NumField() != 1 || t.Field(0).Type.Kind() != reflect.Pointer || t.Size() != unsafe.Sizeof(uintptr(0)) {
		return fmt.Errorf("%w: this version of github.com/yalue/onnxruntime_go lays out RunOptions differently (%d fields)",
			ErrUnsupported, t.NumField())
	}
	return nil
}

// runOptionsPtr reads the OrtRunOptions pointer the binding keeps in ro.
func runOptionsPtr(ro *ort.RunOptions) (unsafe.Pointer, error) {
	if ro == nil {
		return nil, errors.New("ortapi: nil RunOptions")
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(ro))
	if p == nil {
		return nil, errors.New("ortapi: RunOptions already destroyed")
	}
	return p, nil
}
