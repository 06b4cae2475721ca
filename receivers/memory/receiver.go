package memory

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/lifecycle"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

// source reads the machine's memory statistics into a sample: /proc on
// Linux, gopsutil elsewhere.
type source interface {
	// read fills s with what w asks for and marks failing readings in
	// fail (each reported once).
	read(ctx context.Context, s *sample, w want, fail *procfs.Failures)
	close() error
}

// Receiver observes the host's memory and paging readings. Create it with
// New; it is safe for concurrent use.
type Receiver struct {
	cb   lifecycle.Callback // its lock guards the fields below
	src  source
	want want

	usage, limit, avail, pagingUsage metric.Int64ObservableUpDownCounter
	util, pagingUtil                 metric.Float64ObservableGauge
	faults, ops                      metric.Int64ObservableCounter

	cur  sample
	snap sample // Snapshot's own sample
	fail procfs.Failures
}

// Attribute options, built once.
var (
	stateUsed    = opts(semconv.SystemMemoryStateUsed)
	stateFree    = opts(semconv.SystemMemoryStateFree)
	stateBuffers = opts(semconv.SystemMemoryStateBuffers)
	stateCached  = opts(semconv.SystemMemoryStateCached)
	swapUsed     = opts(semconv.SystemPagingStateUsed)
	swapFree     = opts(semconv.SystemPagingStateFree)
	faultMajor   = opts(semconv.SystemPagingFaultTypeMajor)
	faultMinor   = opts(semconv.SystemPagingFaultTypeMinor)
	majorIn      = opts(semconv.SystemPagingDirectionIn, semconv.SystemPagingFaultTypeMajor)
	majorOut     = opts(semconv.SystemPagingDirectionOut, semconv.SystemPagingFaultTypeMajor)
	minorIn      = opts(semconv.SystemPagingDirectionIn, semconv.SystemPagingFaultTypeMinor)
	minorOut     = opts(semconv.SystemPagingDirectionOut, semconv.SystemPagingFaultTypeMinor)
)

func opts(kv ...attribute.KeyValue) []metric.ObserveOption {
	return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
}

// New probes the machine and registers the receiver's instruments and its
// callback on the MeterProvider. It returns an error matching
// receivers.ErrUnsupported, and registers nothing, when the memory
// statistics cannot be read (no /proc/meminfo under the root, or an
// operating system gopsutil does not cover).
func New(opts ...Option) (*Receiver, error) {
	c := newConfig(opts)
	sel, err := c.Resolve("memory", Metrics())
	if err != nil {
		return nil, err
	}
	r := &Receiver{want: want{vmstat: sel.On(semconv.SystemPagingFaultsName) || sel.On(semconv.SystemPagingOperationsName)}}
	if r.src, err = newSource(c, r.want); err != nil {
		return nil, err
	}
	if err := r.register(c, sel); err != nil {
		return nil, errors.Join(err, r.src.close())
	}
	return r, nil
}

func (r *Receiver) register(c config, sel procfs.Selection) error {
	in := lifecycle.NewInstruments(c.Meter(ScopeName, Version()), sel)
	lifecycle.Create(in, semconv.SystemMemoryUsageName, &r.usage, semconv.NewSystemMemoryUsage)
	lifecycle.Create(in, semconv.SystemMemoryLimitName, &r.limit, semconv.NewSystemMemoryLimit)
	lifecycle.Create(in, semconv.SystemMemoryUtilizationName, &r.util, semconv.NewSystemMemoryUtilization)
	lifecycle.Create(in, semconv.SystemMemoryLinuxAvailableName, &r.avail, semconv.NewSystemMemoryLinuxAvailable)
	lifecycle.Create(in, semconv.SystemPagingUsageName, &r.pagingUsage, semconv.NewSystemPagingUsage)
	lifecycle.Create(in, semconv.SystemPagingUtilizationName, &r.pagingUtil, semconv.NewSystemPagingUtilization)
	lifecycle.Create(in, semconv.SystemPagingFaultsName, &r.faults, semconv.NewSystemPagingFaults)
	lifecycle.Create(in, semconv.SystemPagingOperationsName, &r.ops, semconv.NewSystemPagingOperations)
	return r.cb.RegisterLocked("memory", in, r.collect)
}

// Shutdown unregisters the callback and closes the files the receiver
// keeps open. A collection after Shutdown observes nothing. It is safe to
// call more than once.
func (r *Receiver) Shutdown(ctx context.Context) error {
	return r.cb.Shutdown("memory", r.src.close)
}

var _ receivers.Receiver = (*Receiver)(nil)

// collect is the receiver's one callback; it runs under r.cb's lock, and
// not after Shutdown (RegisterLocked).
func (r *Receiver) collect(ctx context.Context, o metric.Observer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := &r.cur
	r.src.read(ctx, s, r.want, &r.fail)

	total := s.mem[memTotal]
	if r.limit != nil && s.hasMem(memTotal) {
		o.ObserveInt64(r.limit, procfs.ClampInt64(total))
	}
	if u := s.usage(); u.ok {
		if r.usage != nil {
			o.ObserveInt64(r.usage, procfs.ClampInt64(u.used), stateUsed...)
			o.ObserveInt64(r.usage, procfs.ClampInt64(u.free), stateFree...)
			if u.hasBuffers {
				o.ObserveInt64(r.usage, procfs.ClampInt64(u.buffers), stateBuffers...)
			}
			if u.hasCached {
				o.ObserveInt64(r.usage, procfs.ClampInt64(u.cached), stateCached...)
			}
		}
		if r.util != nil && total > 0 {
			t := float64(total)
			o.ObserveFloat64(r.util, float64(u.used)/t, stateUsed...)
			o.ObserveFloat64(r.util, float64(u.free)/t, stateFree...)
			if u.hasBuffers {
				o.ObserveFloat64(r.util, float64(u.buffers)/t, stateBuffers...)
			}
			if u.hasCached {
				o.ObserveFloat64(r.util, float64(u.cached)/t, stateCached...)
			}
		}
	}
	if r.avail != nil && s.hasMem(memAvailable) {
		o.ObserveInt64(r.avail, procfs.ClampInt64(s.mem[memAvailable]))
	}
	// No swap configured: no paging usage at all, rather than zeros.
	if swapTotal := s.mem[memSwapTotal]; s.hasMem(memSwapTotal) && s.hasMem(memSwapFree) && swapTotal > 0 {
		free := min(s.mem[memSwapFree], swapTotal)
		used := swapTotal - free
		if r.pagingUsage != nil {
			o.ObserveInt64(r.pagingUsage, procfs.ClampInt64(used), swapUsed...)
			o.ObserveInt64(r.pagingUsage, procfs.ClampInt64(free), swapFree...)
		}
		if r.pagingUtil != nil {
			o.ObserveFloat64(r.pagingUtil, float64(used)/float64(swapTotal), swapUsed...)
			o.ObserveFloat64(r.pagingUtil, float64(free)/float64(swapTotal), swapFree...)
		}
	}
	if r.faults != nil && s.hasVM(vmPgfault) && s.hasVM(vmPgmajfault) {
		// pgfault counts every fault, major ones included.
		major := s.vm[vmPgmajfault]
		minor := s.vm[vmPgfault] - min(major, s.vm[vmPgfault])
		o.ObserveInt64(r.faults, procfs.ClampInt64(major), faultMajor...)
		o.ObserveInt64(r.faults, procfs.ClampInt64(minor), faultMinor...)
	}
	if r.ops != nil {
		observePair(o, r.ops, s, vmPswpin, vmPswpout, majorIn, majorOut)
		observePair(o, r.ops, s, vmPgpgin, vmPgpgout, minorIn, minorOut)
	}
	return r.fail.Err()
}

func observePair(o metric.Observer, c metric.Int64ObservableCounter, s *sample, in, out int, inAttrs, outAttrs []metric.ObserveOption) {
	if s.hasVM(in) {
		o.ObserveInt64(c, procfs.ClampInt64(s.vm[in]), inAttrs...)
	}
	if s.hasVM(out) {
		o.ObserveInt64(c, procfs.ClampInt64(s.vm[out]), outAttrs...)
	}
}
