package instrument

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/semconv"
)

// The runs counter and the in-flight gauge cost the Run path two atomic
// adds: sessions count into a runCell, and one callback per MeterProvider
// observes every cell. Cells are shared by all sessions with the same
// attributes (the same model) and outlive them, so onnxruntime.runs stays
// monotonic when a session closes or is replaced, and the last counts are
// still exported after Close.
//
// A synchronous counter would cost one SDK Add per run (~0.5 µs here, a
// fifth of the SDK floor); an atomic costs nanoseconds.

// runCell counts the runs of one attribute set.
type runCell struct {
	opt    metric.MeasurementOption
	runs   atomic.Int64
	active atomic.Int64
}

// runCounters are the cells of one MeterProvider and their callback.
type runCounters struct {
	mu     sync.Mutex
	cells  map[attribute.Distinct]*runCell
	list   []*runCell // iterated by the callback; append-only
	runs   metric.Int64ObservableCounter
	active metric.Int64ObservableUpDownCounter
	reg    metric.Registration
}

// countersByProvider holds one runCounters per MeterProvider in use. It
// grows by one entry per provider, which programs create once.
var countersByProvider sync.Map // metric.MeterProvider -> *runCounters

// cellFor returns the shared cell of set for the provider behind meter.
func cellFor(mp metric.MeterProvider, meter metric.Meter, set attribute.Set) *runCell {
	var rc *runCounters
	if t := reflect.TypeOf(mp); t != nil && t.Comparable() {
		v, _ := countersByProvider.LoadOrStore(mp, &runCounters{cells: map[attribute.Distinct]*runCell{}})
		rc = v.(*runCounters)
	} else {
		// A provider that cannot be a map key gets counters of its own.
		rc = &runCounters{cells: map[attribute.Distinct]*runCell{}}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.reg == nil {
		rc.register(meter)
	}
	c, ok := rc.cells[set.Equivalent()]
	if !ok {
		c = &runCell{opt: metric.WithAttributeSet(set)}
		rc.cells[set.Equivalent()] = c
		rc.list = append(rc.list, c)
	}
	return c
}

// register creates the two instruments and their callback. rc.mu is held.
func (rc *runCounters) register(meter metric.Meter) {
	var err1, err2, err3 error
	rc.runs, err1 = semconv.NewOnnxruntimeRuns(meter)
	rc.active, err2 = semconv.NewOnnxruntimeRunActive(meter)
	rc.reg, err3 = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		rc.mu.Lock()
		cells := rc.list
		rc.mu.Unlock()
		for _, c := range cells {
			o.ObserveInt64(rc.runs, c.runs.Load(), c.opt)
			o.ObserveInt64(rc.active, c.active.Load(), c.opt)
		}
		return nil
	}, rc.runs, rc.active)
	for _, err := range []error{err1, err2, err3} {
		if err != nil {
			otel.Handle(fmt.Errorf("ortel: run counters: %w", err))
		}
	}
	if rc.reg == nil {
		rc.reg = noRegistration{}
	}
}

type noRegistration struct{ metric.Registration }

func (noRegistration) Unregister() error { return nil }
