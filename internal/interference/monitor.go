package interference

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
)

// Verdict is the judgement of a phase: report.Measurement, so that the
// report carries it as it is.
type Verdict = report.Measurement

// Reason is one kind of disturbance in a Verdict.
type Reason = report.MeasurementReason

// scanEvery bounds how often a Monitor reads every process's stat to name
// a co-runner: a scan reads hundreds of files.
const scanEvery = 500 * time.Millisecond

// Monitor samples the sources in the background between Start and Stop.
type Monitor struct {
	cfg        Config
	cpus       map[int]bool
	cpuList    []int
	affinityIn bool
	loadStart  []float64
	sources    []report.MeasurementSource

	// last is the latest sample's state (lastUnknown, lastStable,
	// lastDisturbed), read without the lock: State is called once per
	// measured request, and the lock is held while a disturbed sample
	// reads every process's stat.
	last atomic.Int32

	mu       sync.Mutex
	prev     snapshot
	samples  []sample
	lastScan time.Time
	scan     map[int]proc    // the last scan of every process
	culprits map[int]culprit // CPU ticks of other processes seen on the cores
	stopped  *Verdict
	stopOnce sync.Once

	cancel context.CancelFunc
	done   chan struct{}
}

type culprit struct {
	comm  string
	ticks uint64
}

// Start reads every source once and samples them every cfg.Interval
// until Stop or ctx ends. It fails only when /proc/stat cannot be read:
// without it nothing can be judged. A missing source is listed as
// unavailable in the verdict.
func Start(ctx context.Context, cfg Config) (*Monitor, error) {
	m, err := newMonitor(cfg, time.Now())
	if err != nil {
		return nil, err
	}
	ctx, m.cancel = context.WithCancel(ctx)
	m.done = make(chan struct{})
	go m.loop(ctx)
	return m, nil
}

// newMonitor reads the first snapshot, without sampling in the background.
func newMonitor(cfg Config, now time.Time) (*Monitor, error) {
	cfg.defaults()
	m := &Monitor{cfg: cfg, culprits: map[int]culprit{}}
	allowed, affErr := readAffinity(cfg.HostRoot, cfg.PID)
	cpus := cfg.CPUs
	if cpus == nil {
		cpus = allowed
	}
	m.cpus = map[int]bool{}
	for _, c := range cpus {
		m.cpus[c] = true
	}
	m.cpuList = slices.Sorted(mapsKeys(m.cpus))
	m.affinityIn = affErr == nil && len(allowed) > 0
	for _, c := range allowed {
		m.affinityIn = m.affinityIn && m.cpus[c]
	}
	first := read(cfg.HostRoot, cfg.PID, cfg.Also, m.cpus, now)
	if err := first.errs[srcStat]; err != nil {
		return nil, fmt.Errorf("interference: read %s under %q: %w", srcStat, cfg.HostRoot, err)
	}
	if len(m.cpus) == 0 {
		// No affinity known and no CPUs given: every online CPU.
		for c := range first.cpus {
			m.cpus[c] = true
		}
		m.cpuList = slices.Sorted(mapsKeys(m.cpus))
	}
	for _, c := range m.cpuList {
		if _, ok := first.cpus[c]; !ok {
			return nil, fmt.Errorf("interference: CPU %d is not in %s", c, srcStat)
		}
	}
	m.loadStart, _ = readLoadavg(cfg.HostRoot)
	m.sources = sourcesOf(first)
	m.prev = first
	return m, nil
}

func mapsKeys(m map[int]bool) func(func(int) bool) {
	return func(yield func(int) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sourcesOf lists every source of a snapshot, available or not.
func sourcesOf(s snapshot) []report.MeasurementSource {
	names := []string{srcStat, srcTasks, srcProcStat, srcPSICPU, srcPSIMem, srcPSIIO, srcThrottle}
	out := make([]report.MeasurementSource, 0, len(names))
	for _, n := range names {
		src := report.MeasurementSource{Source: n, Available: true}
		if err := s.errs[n]; err != nil {
			src.Available, src.Reason = false, err.Error()
		}
		out = append(out, src)
	}
	return out
}

func (m *Monitor) loop(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(m.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.tick(now)
		}
	}
}

// tick reads a snapshot at now and judges the interval since the last.
func (m *Monitor) tick(now time.Time) {
	cur := read(m.cfg.HostRoot, m.cfg.PID, m.cfg.Also, m.cpus, now)
	m.mu.Lock()
	defer m.mu.Unlock()
	if cur.errs[srcStat] != nil {
		return // judged against the next snapshot that reads
	}
	s := judge(m.prev, cur, m.cpus, m.affinityIn)
	m.samples = append(m.samples, s)
	m.prev = cur
	if len(s.values) > 0 {
		m.last.Store(lastDisturbed)
	} else {
		m.last.Store(lastStable)
	}
	if _, ok := s.values[KindCoRunner]; ok && now.Sub(m.lastScan) >= scanEvery {
		m.scanCulprits(now)
	} else if !ok {
		m.scan = nil // only consecutive scans in disturbed time count
	}
}

// scanCulprits reads every process and credits those on the bench's cores
// with the CPU time they used since the previous scan.
func (m *Monitor) scanCulprits(now time.Time) {
	cur := scanProcs(m.cfg.HostRoot)
	for pid, p := range cur {
		if pid == m.cfg.PID || slices.Contains(m.cfg.Also, pid) || !m.cpus[p.processor] {
			continue
		}
		if old, ok := m.scan[pid]; ok && p.ticks > old.ticks {
			c := m.culprits[pid]
			c.comm, c.ticks = p.comm, c.ticks+p.ticks-old.ticks
			m.culprits[pid] = c
		}
	}
	m.scan, m.lastScan = cur, now
}

// Window judges the samples between start and end, each weighted by its
// overlap with the window. The monitor keeps sampling.
func (m *Monitor) Window(start, end time.Time) Verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.verdict(start, end)
}

// Stop ends sampling, takes a last sample, and judges the whole time
// since Start. Calling it again returns the same verdict.
func (m *Monitor) Stop() Verdict { return m.stopAt(time.Now()) }

func (m *Monitor) stopAt(now time.Time) Verdict {
	m.stopOnce.Do(func() {
		if m.cancel != nil {
			m.cancel()
			<-m.done
		}
		m.tick(now)
		m.mu.Lock()
		defer m.mu.Unlock()
		v := m.verdict(time.Time{}, now)
		v.LoadAvgEnd, _ = readLoadavg(m.cfg.HostRoot)
		m.stopped = &v
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	return *m.stopped
}

// State is the verdict of the latest sample alone, "stable" or
// "disturbed"; "" before the first. It is cheap enough to call per
// request.
func (m *Monitor) State() string {
	switch m.last.Load() {
	case lastStable:
		return report.MeasurementStable
	case lastDisturbed:
		return report.MeasurementDisturbed
	}
	return ""
}

// Values of Monitor.last.
const (
	lastUnknown int32 = iota
	lastStable
	lastDisturbed
)
