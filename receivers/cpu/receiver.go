package cpu

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

// source reads the machine's CPU statistics into a sample: /proc on Linux,
// gopsutil elsewhere.
type source interface {
	// read fills s with what w asks for, marks failing readings in fail
	// (each reported once) and reports whether any CPU time was read.
	read(ctx context.Context, s *sample, w want, fail *procfs.Failures) bool
	// hz is the number of ticks per second of the times read.
	hz() float64
	close() error
}

// Receiver observes the host's CPU readings. Create it with New; it is safe
// for concurrent use.
type Receiver struct {
	cb   lifecycle.Callback // its lock guards the fields below
	src  source
	want want

	time       metric.Float64ObservableCounter
	utilGauge  metric.Float64ObservableGauge
	freq       metric.Int64ObservableGauge
	count      metric.Int64ObservableUpDownCounter
	ctxt, intr metric.Int64ObservableCounter
	load       metric.Float64ObservableGauge
	loadAttrs  [3][]metric.ObserveOption
	attrs      []cpuAttrs // by logical number, built on first sight
	cur        sample
	prev       []cpuTicks // utilization baseline by logical number
	perCPU     bool       // per logical CPU, or all together
	prevTotal  cpuTicks   // utilization baseline of all CPUs together
	totalAttrs cpuAttrs   // attributes without cpu.logical_number
	fail       procfs.Failures
	snap       sample // Snapshot's own sample
}

// cpuAttrs holds the attribute options of one logical CPU, built once.
type cpuAttrs struct {
	mode [numModes][]metric.ObserveOption
	freq []metric.ObserveOption
}

var modeAttrs = [numModes]attribute.KeyValue{
	modeUser:      semconv.CPUModeUser,
	modeNice:      semconv.CPUModeNice,
	modeSystem:    semconv.CPUModeSystem,
	modeIdle:      semconv.CPUModeIdle,
	modeIOWait:    semconv.CPUModeIowait,
	modeInterrupt: semconv.CPUModeInterrupt,
	modeSteal:     semconv.CPUModeSteal,
}

// New probes the machine and registers the receiver's instruments and its
// callback on the MeterProvider. It returns an error matching
// receivers.ErrUnsupported, and registers nothing, when the CPU statistics
// cannot be read (no /proc/stat under the root, or an operating system
// gopsutil does not cover).
func New(opts ...Option) (*Receiver, error) {
	c := newConfig(opts)
	sel, err := c.Resolve("cpu", Metrics())
	if err != nil {
		return nil, err
	}
	r := &Receiver{perCPU: c.perCPU, want: want{
		perCPU: c.perCPU && (sel.On(semconv.SystemCPUTimeName) || sel.On(semconv.SystemCPUUtilizationName)) ||
			sel.On(semconv.SystemCPUFrequencyName),
		ctxt: sel.On(semconv.OrtelSystemContextSwitchesName),
		intr: sel.On(semconv.OrtelSystemInterruptsName),
		load: sel.On(semconv.OrtelSystemLoadAverageName),
		freq: sel.On(semconv.SystemCPUFrequencyName),
	}}
	if r.src, err = newSource(c, r.want); err != nil {
		return nil, err
	}
	r.prime()
	if err := r.register(c, sel); err != nil {
		return nil, errors.Join(err, r.src.close())
	}
	return r, nil
}

// prime takes the utilization baselines at construction, so the first
// collection already reports utilization since New: a short-lived program
// (a bench of one second) then exports it too. A failure here is left for
// the collections to report.
func (r *Receiver) prime() {
	var fail procfs.Failures
	if !r.src.read(context.Background(), &r.cur, r.want, &fail) {
		return
	}
	for n := range r.cur.cpus {
		if c := &r.cur.cpus[n]; c.ok {
			for len(r.prev) <= n {
				r.prev = append(r.prev, cpuTicks{})
			}
			r.prev[n] = *c
		}
	}
	if r.cur.total.ok {
		r.prevTotal = r.cur.total
	}
}

func (r *Receiver) register(c config, sel procfs.Selection) error {
	in := lifecycle.NewInstruments(c.Meter(ScopeName, Version()), sel)
	lifecycle.Create(in, semconv.SystemCPUTimeName, &r.time, semconv.NewSystemCPUTime)
	lifecycle.Create(in, semconv.SystemCPUUtilizationName, &r.utilGauge, semconv.NewSystemCPUUtilization)
	lifecycle.Create(in, semconv.SystemCPUFrequencyName, &r.freq, semconv.NewSystemCPUFrequency)
	lifecycle.Create(in, semconv.SystemCPULogicalCountName, &r.count, semconv.NewSystemCPULogicalCount)
	lifecycle.Create(in, semconv.OrtelSystemContextSwitchesName, &r.ctxt, semconv.NewOrtelSystemContextSwitches)
	lifecycle.Create(in, semconv.OrtelSystemInterruptsName, &r.intr, semconv.NewOrtelSystemInterrupts)
	lifecycle.Create(in, semconv.OrtelSystemLoadAverageName, &r.load, semconv.NewOrtelSystemLoadAverage)
	for m := range numModes {
		r.totalAttrs.mode[m] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(modeAttrs[m]))}
	}
	for i, w := range []attribute.KeyValue{semconv.OrtelLoadAverageWindow1m, semconv.OrtelLoadAverageWindow5m, semconv.OrtelLoadAverageWindow15m} {
		r.loadAttrs[i] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(w))}
	}
	return r.cb.RegisterLocked("cpu", in, r.collect)
}

// Shutdown unregisters the callback and closes the files the receiver
// keeps open. A collection after Shutdown observes nothing. It is safe to
// call more than once.
func (r *Receiver) Shutdown(ctx context.Context) error {
	return r.cb.Shutdown("cpu", r.src.close)
}

var _ receivers.Receiver = (*Receiver)(nil)

// collect is the receiver's one callback; it runs under r.cb's lock, and
// not after Shutdown (RegisterLocked).
func (r *Receiver) collect(ctx context.Context, o metric.Observer) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	timesOK := r.src.read(ctx, &r.cur, r.want, &r.fail)
	hz := r.src.hz()
	s := &r.cur

	if timesOK && r.count != nil && s.online > 0 {
		o.ObserveInt64(r.count, int64(s.online))
	}
	if r.perCPU {
		for n := range s.cpus {
			if c := &s.cpus[n]; c.ok {
				for len(r.prev) <= n {
					r.prev = append(r.prev, cpuTicks{})
				}
				r.observeTimes(o, c, &r.prev[n], r.cpuAttrs(n), hz)
			}
		}
	} else if s.total.ok {
		r.observeTimes(o, &s.total, &r.prevTotal, &r.totalAttrs, hz)
	}
	if r.freq != nil {
		for n, hz := range s.freq {
			if hz > 0 {
				o.ObserveInt64(r.freq, hz, r.cpuAttrs(n).freq...)
			}
		}
	}
	if r.ctxt != nil && s.ctxtOK {
		o.ObserveInt64(r.ctxt, procfs.ClampInt64(s.ctxt))
	}
	if r.intr != nil && s.intrOK {
		o.ObserveInt64(r.intr, procfs.ClampInt64(s.intr))
	}
	if r.load != nil && s.loadOK {
		for i, v := range s.load {
			o.ObserveFloat64(r.load, v, r.loadAttrs[i]...)
		}
	}
	return r.fail.Err()
}

// observeTimes observes the time of one CPU (or of all together) by mode,
// and its utilization against the baseline p.
func (r *Receiver) observeTimes(o metric.Observer, c, p *cpuTicks, a *cpuAttrs, hz float64) {
	if r.time != nil {
		for m := range numModes {
			if c.has(m) {
				o.ObserveFloat64(r.time, float64(c.t[m])/hz, a.mode[m]...)
			}
		}
	}
	if r.utilGauge != nil {
		r.observeUtilization(o, c, p, a)
	}
}

// observeUtilization observes each mode's share of the ticks that passed
// since the previous collection (the baseline p). The first collection,
// and one in which no tick passed, observe nothing: there is no interval to
// divide by, and a made-up value would be wrong.
func (r *Receiver) observeUtilization(o metric.Observer, c, p *cpuTicks, a *cpuAttrs) {
	if !p.ok {
		*p = *c
		return
	}
	var d [numModes]uint64
	var total uint64
	for m := range numModes {
		if c.has(m) && p.has(m) && c.t[m] > p.t[m] { // a counter that went back (iowait can) adds nothing
			d[m] = c.t[m] - p.t[m]
			total += d[m]
		}
	}
	if total == 0 {
		return // keep the older baseline until time has passed
	}
	for m := range numModes {
		if c.has(m) && p.has(m) {
			o.ObserveFloat64(r.utilGauge, float64(d[m])/float64(total), a.mode[m]...)
		}
	}
	*p = *c
}

func (r *Receiver) cpuAttrs(n int) *cpuAttrs {
	for len(r.attrs) <= n {
		i := len(r.attrs)
		var a cpuAttrs
		num := semconv.CPULogicalNumber(i)
		for m := range numModes {
			a.mode[m] = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(modeAttrs[m], num))}
		}
		a.freq = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(num))}
		r.attrs = append(r.attrs, a)
	}
	return &r.attrs[n]
}
