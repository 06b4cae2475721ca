//go:build linux && cgo

package nvml

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// collect reads every GPU, each on its own goroutine, and waits for them
// until the timeout (or the context's deadline, if sooner). A GPU that
// has not answered by then is reported degraded and left out; its
// goroutine finishes in its own time, and until it does the GPU is not
// asked again: at most one NVML call is outstanding per GPU, however long
// the driver hangs. A failed GPU is not asked at all. Collections run one
// at a time.
func (r *Receiver) collect(ctx context.Context) ([]*sample, error) {
	select {
	case r.collectMu <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.collectMu }()

	type result struct {
		i int
		s *sample
	}
	out := make([]*sample, len(r.gpus))
	results := make(chan result, len(r.gpus)) // buffered: a late goroutine never blocks
	pending := 0
	for i, g := range r.gpus {
		if g.failed() {
			out[i] = &sample{state: StateFailed}
			continue
		}
		if !g.busy.CompareAndSwap(false, true) {
			continue // still in an earlier collection's call: degraded below
		}
		pending++
		go func() {
			s := g.read(r)
			g.busy.Store(false)
			results <- result{i, s}
			if r.cfg.afterRead != nil {
				r.cfg.afterRead(g.index)
			}
		}()
	}

	timeout := r.cfg.timeout
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	expired := r.cfg.expired
	if expired == nil {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		expired = timer.C
	}
wait:
	for pending > 0 {
		select {
		case res := <-results:
			out[res.i] = res.s
			pending--
		case <-expired:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	// A reading that arrived as the time ran out is used, not thrown away.
drain:
	for pending > 0 {
		select {
		case res := <-results:
			out[res.i] = res.s
			pending--
		default:
			break drain
		}
	}

	var errs []error
	for i, g := range r.gpus {
		s := out[i]
		if s == nil {
			err := fmt.Errorf("nvml: GPU %d (%s): NVML did not answer within %v; the GPU is skipped until it does", g.index, g.info.UUID, timeout)
			s = &sample{state: StateDegraded, err: err}
			out[i] = s
			if r.failures.First(i) {
				errs = append(errs, err)
			}
		} else if s.state != StateFailed {
			r.failures.OK(i)
		}
		if s.state == StateFailed && !g.failed() {
			errs = append(errs, s.err) // reported once: the GPU is not asked again
		}
		if s.errs != nil {
			errs = append(errs, s.errs)
		}
		g.setState(s.state, s.err)
	}
	return out, errors.Join(errs...)
}

// observe is the receiver's callback. It observes nothing until NVML is
// initialized.
func (r *Receiver) observe(ctx context.Context, o metric.Observer) error {
	if !r.isReady.Load() {
		return nil
	}
	samples, err := r.collect(ctx)
	for i, s := range samples {
		r.observeGPU(o, r.gpus[i], s)
	}
	return err
}

func (r *Receiver) observeGPU(o metric.Observer, g *gpu, s *sample) {
	in, a := &r.inst, &g.attrs
	if in.status != nil {
		for i, st := range states {
			v := int64(0)
			if st == s.state {
				v = 1
			}
			o.ObserveInt64(in.status, v, a.status[i]...)
		}
	}
	if s.state != StateOK {
		return
	}
	f64 := func(inst metric.Float64Observable, v opt[float64], attrs []metric.ObserveOption) {
		if inst != nil && v.ok {
			o.ObserveFloat64(inst, v.v, attrs...)
		}
	}
	i64 := func(inst metric.Int64Observable, v opt[int64], attrs []metric.ObserveOption) {
		if inst != nil && v.ok {
			o.ObserveInt64(inst, v.v, attrs...)
		}
	}
	f64(in.utilization, s.utilization, a.tasks[0])
	f64(in.utilization, s.encoder, a.tasks[1])
	f64(in.utilization, s.decoder, a.tasks[2])
	f64(in.memActivity, s.memActivity, a.id)
	i64(in.memUsage, s.memUsed, a.ident)
	i64(in.memLimit, s.memTotal, a.ident)
	if s.memUsed.ok && s.memTotal.ok && s.memTotal.v > 0 {
		f64(in.memUtilization, some(float64(s.memUsed.v)/float64(s.memTotal.v)), a.ident)
	}
	f64(in.temperature, s.temperature, a.temperature[0])
	f64(in.temperature, s.memTemperature, a.temperature[1])
	if in.tempLimit != nil {
		for _, l := range g.limits {
			o.ObserveFloat64(in.tempLimit, l.celsius, l.attrs...)
		}
	}
	f64(in.power, s.power, a.component)
	f64(in.energy, s.energy, a.component)
	for d := range s.pcie {
		i64(in.io, s.pcie[d], a.io[d])
	}
	for k := range s.ecc {
		i64(in.errors, s.ecc[k], a.errors[k])
	}
	for c := range s.clocks {
		i64(in.clock, s.clocks[c], a.clocks[c])
	}
	if in.throttle != nil && s.throttle.ok {
		for t, reason := range throttleReasons {
			if g.throttleMask&reason.bit == 0 {
				continue // this GPU never reports it
			}
			v := 0.0
			if s.throttle.v&reason.bit != 0 {
				v = 1
			}
			o.ObserveFloat64(in.throttle, v, a.throttle[t]...)
		}
	}
	for pid, bytes := range s.procMemory {
		i64(in.procMemory, some(bytes), s.procSets[pid].memory)
	}
	for pid, u := range s.procUtil {
		for task := range u {
			f64(in.procUtil, some(u[task]), s.procSets[pid].util[task])
		}
	}
	for m := range s.gpm {
		attrs := a.id
		switch m {
		case gpmPCIeTX:
			attrs = a.pcieRate[transmit]
		case gpmPCIeRX:
			attrs = a.pcieRate[receive]
		}
		f64(in.gpm[m], s.gpm[m], attrs)
	}
}

// Ready waits until NVML is initialized and the GPUs are known. It
// returns nil when at least one GPU is being read; an error matching
// receivers.ErrUnsupported when NVML or the GPUs are missing (the
// receiver then reports nothing); or the context's error if it ends
// first.
func (r *Receiver) Ready(ctx context.Context) error {
	select {
	case <-r.ready:
		return r.initErr
	case <-ctx.Done():
		return fmt.Errorf("nvml: still initializing: %w", ctx.Err())
	}
}

// Devices returns every GPU found, with its state at the last collection,
// once Ready; nil before.
func (r *Receiver) Devices() []Device {
	select {
	case <-r.ready:
	default:
		return nil
	}
	out := make([]Device, 0, len(r.gpus)+len(r.devices))
	for _, g := range r.gpus {
		out = append(out, g.device())
	}
	out = append(out, r.devices...)
	slices.SortFunc(out, func(a, b Device) int { return a.Index - b.Index })
	return out
}

// Snapshot reads every GPU now, for callers that need the numbers
// directly, such as the GPU's share of joules per inference (Energy
// before and after, subtracted) or its utilization during a benchmark. It
// waits for initialization first (see Ready). Like a collection, it waits
// at most the timeout for each GPU; a degraded or failed GPU has a Sample
// with its state and no values.
func (r *Receiver) Snapshot(ctx context.Context) ([]Sample, error) {
	if err := r.Ready(ctx); err != nil {
		return nil, err
	}
	r.cb.Lock()
	down := r.cb.Down()
	r.cb.Unlock()
	if down {
		return nil, errors.New("nvml: Snapshot after Shutdown")
	}
	samples, err := r.collect(ctx)
	out := make([]Sample, 0, len(samples))
	for i, s := range samples {
		g := r.gpus[i]
		sm := Sample{Device: g.device(), Time: s.at, Values: map[Quantity]float64{}}
		put := func(q Quantity, v opt[float64]) {
			if v.ok {
				sm.Values[q] = v.v
			}
		}
		put(Utilization, s.utilization)
		put(Temperature, s.temperature)
		put(Power, s.power)
		put(Energy, s.energy)
		put(SMUtilization, s.gpm[gpmSM])
		if s.memUsed.ok {
			sm.Values[MemoryUsed] = float64(s.memUsed.v)
		}
		if s.memTotal.ok {
			sm.Values[MemoryLimit] = float64(s.memTotal.v)
		}
		if len(s.procMemory) > 0 {
			total := 0.0
			for _, b := range s.procMemory {
				total += float64(b)
			}
			sm.Values[ProcessMemory] = total
		}
		out = append(out, sm)
	}
	return out, err
}

// Shutdown unregisters the callback and, once initialization has
// finished, frees the GPM samples and shuts NVML down. If initialization
// is still running when ctx ends, Shutdown returns ctx's error and the
// initializing goroutine cleans up when it finishes. NVML is not shut
// down while a hung call is outstanding. It is safe to call more than
// once.
func (r *Receiver) Shutdown(ctx context.Context) error {
	// Stop marks the receiver down (init then releases NVML itself if it
	// is still running) and unregisters the callback. A later call finds
	// it stopped and goes on waiting below, as the first one did.
	_, err := r.cb.Stop()
	r.isReady.Store(false)
	select {
	case <-r.ready:
	case <-ctx.Done():
		return errors.Join(err, fmt.Errorf("nvml: shutdown while NVML still initializes: %w", ctx.Err()))
	}
	// Wait for a collection in progress, so nothing reads a GPU while
	// NVML shuts down.
	select {
	case r.collectMu <- struct{}{}:
		defer func() { <-r.collectMu }()
	case <-ctx.Done():
		return errors.Join(err, ctx.Err())
	}
	r.cb.Lock()
	defer r.cb.Unlock()
	return errors.Join(err, r.releaseLocked())
}

// releaseLocked frees the GPM samples and shuts NVML down, unless a GPU
// is still in a call. Callers hold r.cb's lock.
func (r *Receiver) releaseLocked() error {
	if !r.inited {
		return nil
	}
	for _, g := range r.gpus {
		if !g.busy.CompareAndSwap(false, true) {
			return nil // a hung call: leave NVML as it is
		}
		defer g.busy.Store(false)
	}
	for _, g := range r.gpus {
		if g.gpm != nil {
			g.gpm.free()
			g.gpm = nil
		}
	}
	r.inited = false
	if ret := r.lib.Shutdown(); ret != 0 {
		return fmt.Errorf("nvml: shut down NVML: %v", ret)
	}
	return nil
}
