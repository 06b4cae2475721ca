package process

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/lifecycle"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/podattr"
	"github.com/ortel-dev/ortel/semconv"
)

// source reaches processes: /proc/PID on Linux, gopsutil elsewhere.
type source interface {
	// self is the id of this process as the source sees it.
	self() int
	// watch starts watching process pid; it fails when there is no such
	// process.
	watch(pid int, w want) (handle, error)
}

// handle reads one watched process.
type handle interface {
	// read fills s with what w asks for, marking failing readings in fail
	// from base on (each reported once). It reports whether the process
	// has exited.
	read(ctx context.Context, s *sample, w want, fail *procfs.Failures, base int) (exited bool)
	close() error
}

// Receiver observes the readings of a set of processes. Create it with
// New; it is safe for concurrent use.
type Receiver struct {
	cb    lifecycle.Callback // its lock guards the fields below
	want  want
	now   func() time.Time
	src   source
	root  string
	procs []*proc
	fail  procfs.Failures
	free  []int // failure numbers (bases) of dropped processes, for reuse
	next  int   // the next unused base

	cpuTime     metric.Float64ObservableCounter
	cpuUtil     metric.Float64ObservableGauge
	memUsage    metric.Int64ObservableUpDownCounter
	memVirtual  metric.Int64ObservableUpDownCounter
	threads     metric.Int64ObservableUpDownCounter
	fds         metric.Int64ObservableUpDownCounter
	ctxSwitches metric.Int64ObservableCounter
	faults      metric.Int64ObservableCounter
	diskIO      metric.Int64ObservableCounter
}

// proc is one watched process.
type proc struct {
	pid    int
	h      handle
	base   int // its first reading number in Receiver.fail
	exited bool
	told   bool // its exit was reported
	quiet  bool // added by Watch: its exit is not reported
	cur    sample

	// Utilization baseline: CPU seconds and wall time of the previous
	// collection.
	prevOK               bool
	prevUser, prevSystem float64
	prevTime             time.Time

	// Attribute options, built once.
	pidOnly, user, system, voluntary, involuntary, major, minor, read, write []metric.ObserveOption
}

// New opens the processes to watch and registers the receiver's
// instruments and its callback on the MeterProvider. It returns an error
// matching receivers.ErrUnsupported, and registers nothing, when there is
// no /proc under the root (or gopsutil cannot reach processes on this
// system), and another error when a PID given with WithPIDs does not exist.
func New(opts ...Option) (*Receiver, error) {
	c := newConfig(opts)
	sel, err := c.Resolve("process", Metrics())
	if err != nil {
		return nil, err
	}
	src, err := newSource(c)
	if err != nil {
		return nil, err
	}
	r := &Receiver{now: c.now, src: src, root: c.Root, want: want{
		stat: sel.On(semconv.ProcessMemoryUsageName) || sel.On(semconv.ProcessMemoryVirtualName) ||
			sel.On(semconv.ProcessThreadCountName),
		status: sel.On(semconv.ProcessContextSwitchesName) || sel.On(semconv.ProcessCPUUtilizationName),
		io:     sel.On(semconv.ProcessDiskIOName),
		fds:    sel.On(semconv.ProcessUnixFileDescriptorCountName),
	}}
	pids := c.pids
	if len(pids) == 0 && !c.noSelf {
		pids = []int{src.self()}
	}
	seen := map[int]bool{}
	for _, pid := range pids {
		if seen[pid] {
			continue
		}
		seen[pid] = true
		if pid <= 0 {
			r.closeAll()
			return nil, fmt.Errorf("process: cannot watch pid %d: not a process id", pid)
		}
		h, err := src.watch(pid, r.want)
		if err != nil {
			r.closeAll()
			return nil, err
		}
		r.procs = append(r.procs, newProc(pid, h, r.base(), podAttributes(c.Root, pid)))
	}
	r.prime()
	if err := r.register(c, sel); err != nil {
		return nil, errors.Join(err, r.closeAll())
	}
	return r, nil
}

// podAttributes returns the pod and container of process pid
// (k8s.pod.uid, container.id, and pod name and namespace for the agent's
// own pod) from root/proc/PID/cgroup; none for a process outside a
// container or where the file cannot be read (no cgroups, not Linux).
// They are constant for the process's life, so they are read once here.
func podAttributes(root string, pid int) []attribute.KeyValue {
	p, err := podattr.Read(root, pid, nil)
	if err != nil {
		return nil
	}
	return p.Attributes()
}

func newProc(pid int, h handle, base int, pod []attribute.KeyValue) *proc {
	id := append([]attribute.KeyValue{semconv.ProcessPID(pid)}, pod...)
	o := func(kv ...attribute.KeyValue) []metric.ObserveOption {
		return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(append(kv, id...)...))}
	}
	return &proc{
		pid: pid, h: h, base: base,
		pidOnly:     o(),
		user:        o(semconv.CPUModeUser),
		system:      o(semconv.CPUModeSystem),
		voluntary:   o(semconv.ProcessContextSwitchTypeVoluntary),
		involuntary: o(semconv.ProcessContextSwitchTypeInvoluntary),
		major:       o(semconv.SystemPagingFaultTypeMajor),
		minor:       o(semconv.SystemPagingFaultTypeMinor),
		read:        o(semconv.DiskIODirectionRead),
		write:       o(semconv.DiskIODirectionWrite),
	}
}

// base returns the first failure number for a new process: one a dropped
// process left, or a fresh one. Callers hold the lock.
func (r *Receiver) base() int {
	if n := len(r.free); n > 0 {
		b := r.free[n-1]
		r.free = r.free[:n-1]
		return b
	}
	b := r.next
	r.next += numFail
	return b
}

// drop removes the process at index i from the set, closing it if it is
// still open and freeing its failure numbers. Callers hold the lock.
func (r *Receiver) drop(i int) error {
	p := r.procs[i]
	var err error
	if !p.exited {
		p.exited = true
		err = p.h.close()
	}
	for id := p.base; id < p.base+numFail; id++ {
		r.fail.OK(id)
	}
	r.free = append(r.free, p.base)
	r.procs = slices.Delete(r.procs, i, i+1)
	return err
}

// Watch adds the processes with these ids to the set the receiver watches,
// while it is registered: the next collection observes them. Their pod
// attributes are read now (see the package documentation). An id already
// watched is left as it is. A process added by Watch that exits is dropped
// from the set without an error: whoever added it is expected to notice
// (ortel agent --discover rescans /proc). Watch opens every process it can
// and returns the failures joined, each naming its id: one that does not
// exist, one that cannot be read, or any id after Shutdown.
func (r *Receiver) Watch(pids ...int) error {
	r.cb.Lock()
	defer r.cb.Unlock()
	var errs []error
	now := r.now()
	for _, pid := range pids {
		if r.cb.Down() {
			errs = append(errs, fmt.Errorf("process: cannot watch pid %d: the receiver is shut down", pid))
			continue
		}
		if pid <= 0 {
			errs = append(errs, fmt.Errorf("process: cannot watch pid %d: not a process id", pid))
			continue
		}
		if r.watching(pid) {
			continue
		}
		h, err := r.src.watch(pid, r.want)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p := newProc(pid, h, r.base(), podAttributes(r.root, pid))
		p.quiet = true
		r.procs = append(r.procs, p)
		// The utilization baseline, as New's prime does: the first
		// collection already reports it.
		var fail procfs.Failures
		if readProc(context.Background(), p, r.want, &fail) && p.cur.ok(hasTimes) {
			p.prevOK, p.prevUser, p.prevSystem, p.prevTime = true, p.cur.user, p.cur.system, now
		}
	}
	return errors.Join(errs...)
}

// Unwatch removes the processes with these ids from the set, whether New
// or Watch added them, and closes their files: the next collection no
// longer observes them, and reports nothing about them. An id not watched
// is ignored. It returns the errors closing the files gave, joined.
func (r *Receiver) Unwatch(pids ...int) error {
	r.cb.Lock()
	defer r.cb.Unlock()
	var errs []error
	for _, pid := range pids {
		for i := len(r.procs) - 1; i >= 0; i-- {
			if r.procs[i].pid == pid {
				errs = append(errs, r.drop(i))
			}
		}
	}
	return errors.Join(errs...)
}

// watching reports whether process pid is in the set and has not exited.
// Callers hold the lock.
func (r *Receiver) watching(pid int) bool {
	for _, p := range r.procs {
		if p.pid == pid && !p.exited {
			return true
		}
	}
	return false
}

func (r *Receiver) closeAll() error {
	var errs []error
	for _, p := range r.procs {
		if !p.exited {
			p.exited = true
			errs = append(errs, p.h.close())
		}
	}
	return errors.Join(errs...)
}

func (r *Receiver) register(c config, sel procfs.Selection) error {
	in := lifecycle.NewInstruments(c.Meter(ScopeName, Version()), sel)
	lifecycle.Create(in, semconv.ProcessCPUTimeName, &r.cpuTime, semconv.NewProcessCPUTime)
	lifecycle.Create(in, semconv.ProcessCPUUtilizationName, &r.cpuUtil, semconv.NewProcessCPUUtilization)
	lifecycle.Create(in, semconv.ProcessMemoryUsageName, &r.memUsage, semconv.NewProcessMemoryUsage)
	lifecycle.Create(in, semconv.ProcessMemoryVirtualName, &r.memVirtual, semconv.NewProcessMemoryVirtual)
	lifecycle.Create(in, semconv.ProcessThreadCountName, &r.threads, semconv.NewProcessThreadCount)
	lifecycle.Create(in, semconv.ProcessContextSwitchesName, &r.ctxSwitches, semconv.NewProcessContextSwitches)
	lifecycle.Create(in, semconv.ProcessPagingFaultsName, &r.faults, semconv.NewProcessPagingFaults)
	lifecycle.Create(in, semconv.ProcessUnixFileDescriptorCountName, &r.fds, semconv.NewProcessUnixFileDescriptorCount)
	lifecycle.Create(in, semconv.ProcessDiskIOName, &r.diskIO, semconv.NewProcessDiskIO)
	return r.cb.RegisterLocked("process", in, r.collect)
}

// PIDs returns the ids of the processes the receiver watches and that have
// not exited.
func (r *Receiver) PIDs() []int {
	r.cb.Lock()
	defer r.cb.Unlock()
	var out []int
	for _, p := range r.procs {
		if !p.exited {
			out = append(out, p.pid)
		}
	}
	return slices.Clip(out)
}

// Root is the host root the receiver reads /proc under (WithRoot, else
// ORTEL_HOST_ROOT, else "/"): the ids given to Watch are those of
// Root/proc.
func (r *Receiver) Root() string { return r.root }

// Shutdown unregisters the callback and closes the files the receiver
// keeps open. A collection after Shutdown observes nothing. It is safe to
// call more than once.
func (r *Receiver) Shutdown(ctx context.Context) error {
	return r.cb.Shutdown("process", r.closeAll)
}

var _ receivers.Receiver = (*Receiver)(nil)

// errExited is reported once for a watched process that exited.
type errExited struct{ pid int }

func (e errExited) Error() string {
	return fmt.Sprintf("process: pid %d exited: its readings are no longer reported", e.pid)
}

// readProc reads p into p.cur, marking failures in fail, and closes p
// when it has exited.
func readProc(ctx context.Context, p *proc, w want, fail *procfs.Failures) bool {
	if p.exited {
		return false
	}
	if p.h.read(ctx, &p.cur, w, fail, p.base) {
		p.exited = true
		_ = p.h.close()
		return false
	}
	return true
}

// prime takes the utilization baselines at construction, so the first
// collection already reports the CPU utilization since New: a short-lived
// program (a bench of one second) then exports it too. A failure here is
// left for the collections to report.
func (r *Receiver) prime() {
	var fail procfs.Failures
	now := r.now()
	for _, p := range r.procs {
		if readProc(context.Background(), p, r.want, &fail) && p.cur.ok(hasTimes) {
			p.prevOK, p.prevUser, p.prevSystem, p.prevTime = true, p.cur.user, p.cur.system, now
		}
	}
}

// collect is the receiver's one callback; it runs under r.cb's lock, and
// not after Shutdown (RegisterLocked).
func (r *Receiver) collect(ctx context.Context, o metric.Observer) error {
	now := r.now()
	for i := 0; i < len(r.procs); i++ {
		p := r.procs[i]
		if err := ctx.Err(); err != nil {
			r.fail.Report(err)
			break
		}
		ok := readProc(ctx, p, r.want, &r.fail)
		if p.exited {
			if !p.told && !p.quiet {
				p.told = true
				r.fail.Report(errExited{p.pid})
			}
			// Gone for good: drop it, so a set that processes join and
			// leave does not grow (its files are closed already).
			_ = r.drop(i)
			i--
			continue
		}
		if ok {
			r.observe(o, p, now)
		}
	}
	return r.fail.Err()
}

func (r *Receiver) observe(o metric.Observer, p *proc, now time.Time) {
	s := &p.cur
	if s.ok(hasTimes) {
		if r.cpuTime != nil {
			o.ObserveFloat64(r.cpuTime, s.user, p.user...)
			o.ObserveFloat64(r.cpuTime, s.system, p.system...)
		}
		if r.cpuUtil != nil {
			r.observeUtilization(o, p, now)
		}
	}
	if s.ok(hasMemory) {
		if r.memUsage != nil {
			o.ObserveInt64(r.memUsage, procfs.ClampInt64(s.rss), p.pidOnly...)
		}
		if r.memVirtual != nil {
			o.ObserveInt64(r.memVirtual, procfs.ClampInt64(s.virtual), p.pidOnly...)
		}
	}
	if r.threads != nil && s.ok(hasThreads) {
		o.ObserveInt64(r.threads, s.threads, p.pidOnly...)
	}
	if r.ctxSwitches != nil && s.ok(hasCtxt) {
		o.ObserveInt64(r.ctxSwitches, procfs.ClampInt64(s.voluntary), p.voluntary...)
		o.ObserveInt64(r.ctxSwitches, procfs.ClampInt64(s.involuntary), p.involuntary...)
	}
	if r.faults != nil && s.ok(hasFaults) {
		o.ObserveInt64(r.faults, procfs.ClampInt64(s.majflt), p.major...)
		o.ObserveInt64(r.faults, procfs.ClampInt64(s.minflt), p.minor...)
	}
	if r.fds != nil && s.ok(hasFDs) {
		o.ObserveInt64(r.fds, s.fds, p.pidOnly...)
	}
	if r.diskIO != nil && s.ok(hasIO) {
		o.ObserveInt64(r.diskIO, procfs.ClampInt64(s.readBytes), p.read...)
		o.ObserveInt64(r.diskIO, procfs.ClampInt64(s.writeBytes), p.write...)
	}
}

// observeUtilization observes each mode's CPU seconds gained since the
// previous collection divided by the wall time in between and by the
// number of CPUs the process may run on (upstream's definition). The
// first collection has no interval and observes nothing.
func (r *Receiver) observeUtilization(o metric.Observer, p *proc, now time.Time) {
	s := &p.cur
	if p.prevOK {
		elapsed := now.Sub(p.prevTime).Seconds()
		cpus := runtime.NumCPU()
		if s.ok(hasCPUs) && s.cpus > 0 {
			cpus = s.cpus
		}
		if elapsed <= 0 {
			return // no time passed: keep the older baseline
		}
		d := elapsed * float64(cpus)
		o.ObserveFloat64(r.cpuUtil, max(s.user-p.prevUser, 0)/d, p.user...)
		o.ObserveFloat64(r.cpuUtil, max(s.system-p.prevSystem, 0)/d, p.system...)
	}
	p.prevOK, p.prevUser, p.prevSystem, p.prevTime = true, s.user, s.system, now
}
