// Package receivers holds what ortel's hardware receivers share. Each source
// of readings is its own package below this one — cpu, memory, process,
// perf, rapl, thermal, nvml — and each has the same shape:
//
//   - it uses the OpenTelemetry metric API only, with the names of the
//     semconv registry (docs/metrics.md);
//   - what it emits is its generated Metrics table (metrics_gen.go, written
//     by `go generate ./...` from the registry, where each metric's
//     annotations.ortel.source names the receiver's package): WithMetric
//     and WithAllMetrics choose from it, a metric the table lacks cannot be
//     created, and a test checks the receiver emits exactly the table;
//   - New probes the hardware at construction. When the source is absent
//     (no RAPL zones, no NVIDIA driver, no PMU in a VM, no permission) it
//     registers nothing and returns an error matching ErrUnsupported that
//     says why; readings that do not exist are never reported as zeros;
//   - it registers one callback observing all its instruments, with
//     attribute sets built once, and a Shutdown(ctx) that unregisters it;
//   - readers of /proc and /sys take the root folder as an option, so tests
//     run on fixture trees under testdata/;
//   - a collection observes every reading it can and returns the failures
//     joined (errors.Join); a failure is reported once, not on every
//     collection.
//
// What they share lives once, in internal packages:
// receivers/internal/lifecycle creates the instruments, registers the
// callback and shuts it down without deadlocking against a collection;
// receivers/internal/procfs reads /proc and /sys and holds the options
// every receiver takes; its procfstest holds the tests' helpers.
package receivers

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
)

// ErrUnsupported matches the error of a receiver whose source is absent on
// this machine. Use errors.Is(err, ErrUnsupported).
var ErrUnsupported = errors.New("not supported on this machine")

// UnsupportedError says why a source is unavailable.
type UnsupportedError struct {
	Source string // "rapl", "nvml", ...
	Reason string // plain words: "no powercap zones under /sys/class/powercap"
	Err    error  // the underlying error, if any
}

func (e *UnsupportedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: not supported on this machine: %s: %v", e.Source, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: not supported on this machine: %s", e.Source, e.Reason)
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Unwrap returns the underlying error.
func (e *UnsupportedError) Unwrap() error { return e.Err }

// Unsupported returns an *UnsupportedError.
func Unsupported(source, reason string, err error) error {
	return &UnsupportedError{Source: source, Reason: reason, Err: err}
}

// Metric is one metric a receiver can emit, as the semconv registry records
// it for that receiver. Each receiver package's generated Metrics function
// returns its table of them; WithMetric and WithAllMetrics choose among
// them.
type Metric struct {
	Name           string // e.g. "system.cpu.time"
	Kind           string // the OpenTelemetry metric API type, e.g. "Float64ObservableCounter"
	Unit           string // UCUM, e.g. "s"
	Description    string // the instrument description
	DefaultEnabled bool   // on unless an option turns it off
	// Attributes are the keys the receiver sets on the metric's points,
	// in registry order; Required are those every point carries.
	Attributes []attribute.Key
	Required   []attribute.Key
}

// Receiver is what every receiver returns.
type Receiver interface {
	// Shutdown unregisters the receiver's callback and releases what it
	// holds (file descriptors, NVML). It is safe to call more than once.
	Shutdown(ctx context.Context) error
}
