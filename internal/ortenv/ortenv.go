package ortenv

import "github.com/ortel-dev/ortel/instrument/ortlib"

// Version is the ONNX Runtime release that scripts/fetch.sh pins as the
// default; ortlib.SupportedVersions lists the others tested.
const Version = ortlib.DefaultVersion

// EnvLibraryPath names the environment variable that overrides where the
// ONNX Runtime shared library is loaded from.
const EnvLibraryPath = ortlib.EnvLibraryPath

// EnvCacheDir names the environment variable that overrides the project cache.
const EnvCacheDir = ortlib.EnvCacheDir

// FetchHint is the command that fetches the library and models.
const FetchHint = ortlib.FetchHint

// NotFoundError reports that the ONNX Runtime library was not found, with
// every place that was looked at.
type NotFoundError = ortlib.NotFoundError

// CacheDir returns the project cache folder; see ortlib.CacheDir.
func CacheDir() string { return ortlib.CacheDir() }

// FindLibrary returns the path of the ONNX Runtime shared library; see
// ortlib.FindLibrary.
func FindLibrary() (string, error) { return ortlib.FindLibrary() }

// Init finds the library and initializes the ONNX Runtime environment once
// per process; see ortlib.Init.
func Init() (string, error) { return ortlib.Init() }
