package perf

import "github.com/ortel-dev/ortel/receivers"

// ScopeName is the instrumentation scope name of the receiver's meter.
const ScopeName = "github.com/ortel-dev/ortel/receivers/perf"

// Version returns the version of the receiver.
func Version() string { return "0.1.0" }

var _ receivers.Receiver = (*Receiver)(nil)
