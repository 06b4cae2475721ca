package lifecycle

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Instruments creates a receiver's instruments on one meter, for the
// metrics that are on, and keeps them for Callback.Register.
type Instruments struct {
	meter metric.Meter
	sel   procfs.Selection
	list  []metric.Observable
	errs  []error
}

// NewInstruments returns an empty set of instruments created on m for the
// metrics sel turns on.
func NewInstruments(m metric.Meter, sel procfs.Selection) *Instruments {
	return &Instruments{meter: m, sel: sel}
}

// Create creates the instrument of the metric called name with mk (a
// semconv constructor such as semconv.NewHwPower) and stores it in *dst,
// when the metric is on. When it is off, *dst stays nil and the callback
// observes nothing for it. A name that is not in the receiver's table is
// an error (see Add).
func Create[T metric.Observable, O any](in *Instruments, name string, dst *T, mk func(metric.Meter, ...O) (T, error)) {
	if !in.sel.Has(name) {
		in.Add(name, nil, nil)
		return
	}
	if !in.sel.On(name) {
		return
	}
	inst, err := mk(in.meter)
	if err == nil {
		*dst = inst
	}
	in.Add(name, inst, err)
}

// Add keeps inst, the instrument of the metric called name that the
// caller created itself, or its creation error err. A name that is not in
// the receiver's table (the registry does not name the receiver as its
// source) is an error whatever inst is: the code would emit a metric its
// table, docs/metrics.md and WithMetric do not know.
func (in *Instruments) Add(name string, inst metric.Observable, err error) {
	if !in.sel.Has(name) {
		err = errNotInTable
	}
	if err != nil {
		in.errs = append(in.errs, fmt.Errorf("create %s: %w", name, err))
		return
	}
	in.list = append(in.list, inst)
}

// Len returns how many instruments were created.
func (in *Instruments) Len() int { return len(in.list) }

// Err returns the creation errors joined, prefixed with source, or nil.
func (in *Instruments) Err(source string) error {
	if len(in.errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", source, errors.Join(in.errs...))
}

var errNotInTable = errors.New("not one of this receiver's metrics: semconv/registry does not name the receiver's package in the metric's annotations.ortel.source (add it there, then run go generate ./...)")
