package memory

// ScopeName is the instrumentation scope name of the receiver's meter.
const ScopeName = "github.com/ortel-dev/ortel/receivers/memory"

// Version is the version of this package, reported as the instrumentation
// scope version.
func Version() string { return "0.1.0" }
