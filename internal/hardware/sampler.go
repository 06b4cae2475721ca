package hardware

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/receivers/cpu"
	"github.com/ortel-dev/ortel/receivers/nvml"
	"github.com/ortel-dev/ortel/receivers/process"
)

// DefaultInterval is how often a Sampler reads the hardware.
const DefaultInterval = 200 * time.Millisecond

// DefaultIdleWindow is how long a Sampler measures idle power before the
// phase, when an energy counter exists.
const DefaultIdleWindow = time.Second

// Sampler reads a Set's receivers during a bench's measured phase and
// summarizes them into the report's hardware section. It implements
// bench.HardwareSampler.
type Sampler struct {
	set      *Set
	interval time.Duration
	idle     time.Duration
	pid      int

	mu      sync.Mutex
	cancel  context.CancelFunc
	done    chan struct{}
	start   time.Time
	first   reading
	last    reading
	idleW   map[string]float64 // energy counter id -> idle watts
	acc     accum
	series  []report.HardwareSample
	errMu   sync.Mutex // guards errs: read notes failures with or without mu held
	errs    []string
	started bool
}

// NewSampler returns a sampler of set. interval 0 means DefaultInterval;
// idle 0 means DefaultIdleWindow, and a negative idle skips the idle
// baseline.
func NewSampler(set *Set, interval, idle time.Duration) *Sampler {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if idle == 0 {
		idle = DefaultIdleWindow
	}
	pid := os.Getpid()
	if len(set.pids) > 0 {
		pid = set.pids[0]
	}
	return &Sampler{set: set, interval: interval, idle: idle, pid: pid}
}

// reading is one read of every receiver.
type reading struct {
	t      time.Time
	cpu    *cpu.Snapshot
	proc   *process.Process
	memU   *float64
	memU64 uint64
	memTot uint64
	energy map[string]counter // by hw.id
	gpus   []nvml.Sample
	temps  map[string]tempReading
}

// counter is one energy counter's cumulative joules.
type counter struct {
	source, id, name, typ, parent string
	joules                        float64
}

type tempReading struct {
	name string
	c    float64
}

// accum keeps the maxima and sums across ticks.
type accum struct {
	cpuMax, procMax  float64
	memUsedMax       uint64
	peakRSS          uint64
	powerMax         map[string]float64
	gpuUtilSum       map[string]float64
	gpuUtilMax       map[string]float64
	gpuPowerSum      map[string]float64
	gpuPowerMax      map[string]float64
	gpuMemMax        map[string]float64
	gpuTicks         map[string]int
	gpuInfo          map[string]nvml.Device
	tempMax          map[string]tempReading
	gpuEnergyFromPow map[string]float64 // joules integrated from power, when no counter
}

func newAccum() accum {
	return accum{
		powerMax: map[string]float64{}, gpuUtilSum: map[string]float64{}, gpuUtilMax: map[string]float64{},
		gpuPowerSum: map[string]float64{}, gpuPowerMax: map[string]float64{}, gpuMemMax: map[string]float64{},
		gpuTicks: map[string]int{}, gpuInfo: map[string]nvml.Device{}, tempMax: map[string]tempReading{},
		gpuEnergyFromPow: map[string]float64{},
	}
}

// read reads every receiver once. Failures are noted once and skipped.
func (s *Sampler) read(ctx context.Context) reading {
	r := reading{t: time.Now(), energy: map[string]counter{}, temps: map[string]tempReading{}}
	set := s.set
	if set.CPU != nil {
		if snap, err := set.CPU.Snapshot(); err == nil {
			r.cpu = &snap
		} else {
			s.note("cpu", err)
		}
	}
	if set.Memory != nil {
		if snap, err := set.Memory.Snapshot(); err == nil {
			u := snap.Utilization()
			r.memU, r.memU64, r.memTot = &u, snap.Used, snap.Total
		} else {
			s.note("memory", err)
		}
	}
	if set.Process != nil {
		if snap, err := set.Process.Snapshot(); err == nil {
			if p, ok := snap.Process(s.pid); ok {
				r.proc = &p
			}
		} else {
			s.note("process", err)
		}
	}
	if set.RAPL != nil {
		if es, err := set.RAPL.Snapshot(); err == nil {
			for _, e := range es {
				r.energy[e.ID] = counter{source: "rapl", id: e.ID, name: e.Name, typ: e.Type, parent: e.Parent, joules: e.Joules}
			}
		} else {
			s.note("rapl", err)
		}
	}
	if set.NVML != nil {
		nctx, cancel := context.WithTimeout(ctx, nvml.DefaultTimeout*2)
		if gs, err := set.NVML.Snapshot(nctx); err == nil {
			r.gpus = gs
			for _, g := range gs {
				if j, ok := g.Values[nvml.Energy]; ok {
					r.energy[g.Device.UUID] = counter{source: "nvml", id: g.Device.UUID, name: g.Device.Name, typ: "gpu", joules: j}
				}
			}
		} else {
			s.note("nvml", err)
		}
		cancel()
	}
	if set.Thermal != nil {
		if ts, err := set.Thermal.Snapshot(); err == nil {
			for _, t := range ts {
				r.temps[t.ID] = tempReading{name: t.Name, c: t.Celsius}
			}
		} else {
			s.note("thermal", err)
		}
	}
	return r
}

func (s *Sampler) note(source string, err error) {
	msg := source + ": " + err.Error()
	s.errMu.Lock()
	defer s.errMu.Unlock()
	for _, e := range s.errs {
		if e == msg {
			return
		}
	}
	s.errs = append(s.errs, msg)
}

// Start measures idle power (when an energy counter exists), then samples
// in the background until Stop.
func (s *Sampler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("hardware sampler already started")
	}
	s.started = true
	s.acc = newAccum()
	first := s.read(ctx)
	if len(first.energy) > 0 && s.idle > 0 {
		t := time.NewTimer(s.idle)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		after := s.read(ctx)
		s.idleW = map[string]float64{}
		dt := after.t.Sub(first.t).Seconds()
		for id, c := range after.energy {
			if c0, ok := first.energy[id]; ok && dt > 0 {
				s.idleW[id] = (c.joules - c0.joules) / dt
			}
		}
		first = after
	}
	s.start, s.first, s.last = first.t, first, first
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel, s.done = cancel, make(chan struct{})
	go s.loop(cctx)
	return nil
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r := s.read(ctx)
			s.mu.Lock()
			s.tick(r)
			s.mu.Unlock()
		}
	}
}

// tick folds one reading into the series and the maxima. s.mu is held.
func (s *Sampler) tick(r reading) {
	prev := s.last
	dt := r.t.Sub(prev.t).Seconds()
	smp := report.HardwareSample{TS: r.t.Sub(s.start).Seconds(), MemoryUtilization: r.memU}
	if r.cpu != nil && prev.cpu != nil {
		if u, ok := r.cpu.UtilizationSince(*prev.cpu); ok {
			smp.CPUUtilization = &u
			s.acc.cpuMax = max(s.acc.cpuMax, u)
		}
	}
	if r.proc != nil {
		smp.RSSBytes = r.proc.RSS
		s.acc.peakRSS = max(s.acc.peakRSS, r.proc.RSS, r.proc.PeakRSS)
		if prev.proc != nil {
			if u, ok := r.proc.CPUUtilizationSince(*prev.proc); ok {
				smp.ProcessCPU = &u
				s.acc.procMax = max(s.acc.procMax, u)
			}
		}
	}
	s.acc.memUsedMax = max(s.acc.memUsedMax, r.memU64)
	if dt > 0 {
		for id, c := range r.energy {
			if c0, ok := prev.energy[id]; ok {
				w := (c.joules - c0.joules) / dt
				if smp.PowerW == nil {
					smp.PowerW = map[string]float64{}
				}
				smp.PowerW[id] = w
				s.acc.powerMax[id] = max(s.acc.powerMax[id], w)
			}
		}
	}
	for _, g := range r.gpus {
		id := g.Device.UUID
		s.acc.gpuInfo[id] = g.Device
		if u, ok := g.Values[nvml.Utilization]; ok {
			if smp.GPUUtilization == nil {
				smp.GPUUtilization = map[string]float64{}
			}
			smp.GPUUtilization[id] = u
			s.acc.gpuUtilSum[id] += u
			s.acc.gpuUtilMax[id] = max(s.acc.gpuUtilMax[id], u)
			s.acc.gpuTicks[id]++
		}
		if p, ok := g.Values[nvml.Power]; ok {
			s.acc.gpuPowerSum[id] += p
			s.acc.gpuPowerMax[id] = max(s.acc.gpuPowerMax[id], p)
			if _, hasCounter := g.Values[nvml.Energy]; !hasCounter && dt > 0 {
				s.acc.gpuEnergyFromPow[id] += p * dt
			}
		}
		if m, ok := g.Values[nvml.MemoryUsed]; ok {
			s.acc.gpuMemMax[id] = max(s.acc.gpuMemMax[id], m)
		}
	}
	for id, t := range r.temps {
		if cur, ok := s.acc.tempMax[id]; !ok || t.c > cur.c {
			s.acc.tempMax[id] = t
		}
	}
	s.series = append(s.series, smp)
	s.last = r
}

// Stop ends sampling and summarizes the phase; runs is the number of
// inferences in it.
func (s *Sampler) Stop(runs int) *report.Hardware {
	s.mu.Lock()
	started := s.started
	cancel, done := s.cancel, s.done
	s.mu.Unlock()
	if !started || cancel == nil {
		return nil
	}
	cancel()
	<-done
	final := s.read(context.Background())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tick(final)
	return s.summary(final, runs)
}

func (s *Sampler) summary(final reading, runs int) *report.Hardware {
	wall := final.t.Sub(s.start).Seconds()
	h := &report.Hardware{IntervalS: s.interval.Seconds(), WallS: wall, Inferences: runs, Series: s.series}
	for _, st := range s.set.Statuses() {
		h.Sources = append(h.Sources, report.HardwareSource{Source: st.Source, Available: st.Available, Reason: st.Reason})
	}
	if final.cpu != nil && s.first.cpu != nil {
		mean, _ := final.cpu.UtilizationSince(*s.first.cpu)
		h.CPU = &report.CPUUsage{LogicalCPUs: final.cpu.LogicalCPUs, UtilizationMean: mean, UtilizationMax: max(s.acc.cpuMax, mean)}
	}
	if final.memTot > 0 {
		h.Memory = &report.MemoryUsage{TotalBytes: final.memTot, UsedMaxBytes: s.acc.memUsedMax}
	}
	if final.proc != nil {
		p := &report.ProcessUsage{PeakRSSBytes: s.acc.peakRSS}
		if s.first.proc != nil {
			p.CPUUtilizationMean, _ = final.proc.CPUUtilizationSince(*s.first.proc)
			p.CPUUtilizationMax = max(s.acc.procMax, p.CPUUtilizationMean)
		}
		h.Process = p
	}
	ids := slices.Sorted(maps.Keys(s.acc.gpuInfo))
	for _, id := range ids {
		d := s.acc.gpuInfo[id]
		g := report.GPUUsage{ID: id, Name: d.Name, Model: d.Model,
			UtilizationMax: s.acc.gpuUtilMax[id], PowerMaxW: s.acc.gpuPowerMax[id], MemoryUsedMaxBytes: s.acc.gpuMemMax[id]}
		if n := s.acc.gpuTicks[id]; n > 0 {
			g.UtilizationMean = s.acc.gpuUtilSum[id] / float64(n)
			g.PowerMeanW = s.acc.gpuPowerSum[id] / float64(n)
		}
		h.GPUs = append(h.GPUs, g)
		if _, counted := final.energy[id]; !counted && s.acc.gpuEnergyFromPow[id] > 0 {
			// No energy counter on this GPU: energy integrated from power.
			final.energy[id] = counter{source: "nvml", id: id, name: d.Name, typ: "gpu", joules: s.acc.gpuEnergyFromPow[id]}
			s.first.energy[id] = counter{source: "nvml", id: id}
		}
	}
	eids := slices.Sorted(maps.Keys(final.energy))
	for _, id := range eids {
		c := final.energy[id]
		c0, ok := s.first.energy[id]
		if !ok {
			continue
		}
		e := report.EnergyUse{Source: c.source, ID: id, Name: c.name, Type: c.typ, Parent: c.parent,
			Joules: c.joules - c0.joules, PowerMaxW: s.acc.powerMax[id]}
		if wall > 0 {
			e.PowerMeanW = e.Joules / wall
		}
		if runs > 0 {
			e.JoulesPerInference = e.Joules / float64(runs)
		}
		if w, ok := s.idleW[id]; ok {
			e.IdlePowerW = &w
		}
		h.Energy = append(h.Energy, e)
	}
	if len(h.Energy) == 0 {
		h.EnergyUnavailable = s.energyReason()
	}
	s.errMu.Lock()
	h.ReadErrors = append([]string(nil), s.errs...)
	s.errMu.Unlock()
	tids := slices.Sorted(maps.Keys(s.acc.tempMax))
	for _, id := range tids {
		t := s.acc.tempMax[id]
		h.Temperatures = append(h.Temperatures, report.TemperatureMax{ID: id, Name: t.name, MaxCelsius: t.c})
	}
	return h
}

// energyReason says why no energy counter was read.
func (s *Sampler) energyReason() string {
	var parts []string
	for _, st := range s.set.Statuses() {
		if (st.Source == "rapl" || st.Source == "nvml") && !st.Available {
			parts = append(parts, st.Source+": "+st.Reason)
		}
	}
	if len(parts) == 0 {
		return "no energy counter was readable during the measured phase"
	}
	return "no energy source on this machine (" + strings.Join(parts, "; ") + ")"
}
