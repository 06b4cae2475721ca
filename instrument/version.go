package instrument

// ScopeName is the instrumentation scope name of this package's tracers and meters.
const ScopeName = "github.com/ortel-dev/ortel/instrument"

// Version is the version of this package, reported as the instrumentation
// scope version.
func Version() string { return "0.1.0" }
