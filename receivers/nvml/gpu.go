//go:build linux && cgo

package nvml

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

// opt is a reading that may be absent.
type opt[T any] struct {
	v  T
	ok bool
}

func some[T any](v T) opt[T] { return opt[T]{v, true} }

// Directions of hw.gpu.io and nvidia.gpu.pcie.throughput.
const (
	transmit = iota
	receive
)

// sample is one GPU's readings from one collection.
type sample struct {
	state State
	err   error // why the GPU is degraded or failed
	errs  error // failures to report (each once)
	at    time.Time

	utilization, memActivity, encoder, decoder opt[float64]
	memUsed, memTotal                          opt[int64]
	temperature, memTemperature                opt[float64]
	power, energy                              opt[float64]
	clocks                                     [len(clocks)]opt[int64]
	throttle                                   opt[uint64]
	pcie                                       [2]opt[int64] // bytes since the first reading
	ecc                                        [2]opt[int64] // corrected, uncorrected
	procMemory                                 map[int]int64
	procUtil                                   map[int][3]float64 // general, encoder, decoder
	procSets                                   map[int]procSet    // the attribute sets of each process above
	gpm                                        [len(gpmMetrics)]opt[float64]
}

// clocks are the clock domains read, in nvidia.clock.type order.
var clocks = [...]struct {
	typ  nvml.ClockType
	id   reading
	attr attribute.KeyValue
}{
	{nvml.CLOCK_GRAPHICS, rClockGraphics, semconv.NvidiaClockTypeGraphics},
	{nvml.CLOCK_SM, rClockSM, semconv.NvidiaClockTypeSM},
	{nvml.CLOCK_MEM, rClockMemory, semconv.NvidiaClockTypeMemory},
	{nvml.CLOCK_VIDEO, rClockVideo, semconv.NvidiaClockTypeVideo},
}

// throttleReasons maps NVML's clocks event (throttle) reason bits to
// nvidia.throttle.reason.
var throttleReasons = [...]struct {
	bit  uint64
	attr attribute.KeyValue
}{
	{nvml.ClocksEventReasonGpuIdle, semconv.NvidiaThrottleReasonGPUIdle},
	{nvml.ClocksEventReasonApplicationsClocksSetting, semconv.NvidiaThrottleReasonApplicationsClocksSetting},
	{nvml.ClocksEventReasonSwPowerCap, semconv.NvidiaThrottleReasonSwPowerCap},
	{nvml.ClocksThrottleReasonHwSlowdown, semconv.NvidiaThrottleReasonHwSlowdown},
	{nvml.ClocksEventReasonSyncBoost, semconv.NvidiaThrottleReasonSyncBoost},
	{nvml.ClocksEventReasonSwThermalSlowdown, semconv.NvidiaThrottleReasonSwThermalSlowdown},
	{nvml.ClocksThrottleReasonHwThermalSlowdown, semconv.NvidiaThrottleReasonHwThermalSlowdown},
	{nvml.ClocksThrottleReasonHwPowerBrakeSlowdown, semconv.NvidiaThrottleReasonHwPowerBrakeSlowdown},
	{nvml.ClocksEventReasonDisplayClockSetting, semconv.NvidiaThrottleReasonDisplayClockSetting},
}

// allThrottleReasons is every bit in throttleReasons.
const allThrottleReasons = nvml.ClocksEventReasonAll

// thresholds maps NVML temperature thresholds to hw.limit_type, for the
// GPU die (sensor 0) or its memory (sensor 1).
var thresholds = [...]struct {
	typ    nvml.TemperatureThresholds
	sensor int
	attr   attribute.KeyValue
}{
	{nvml.TEMPERATURE_THRESHOLD_SHUTDOWN, 0, semconv.HwLimitTypeCritical},
	{nvml.TEMPERATURE_THRESHOLD_SLOWDOWN, 0, semconv.HwLimitTypeThrottled},
	{nvml.TEMPERATURE_THRESHOLD_GPU_MAX, 0, semconv.HwLimitTypeMax},
	{nvml.TEMPERATURE_THRESHOLD_MEM_MAX, 1, semconv.HwLimitTypeMax},
}

// sensorLocations are the hw.sensor_location of the GPU die and its memory.
var sensorLocations = [2]string{"gpu", "memory"}

// gpmMetrics are the GPM metrics read. NVML gives percentages, turned
// into fractions, and MiB/s, turned into bytes per second.
var gpmMetrics = [...]struct {
	id      nvml.GpmMetricId
	metric  string
	percent bool
}{
	{nvml.GPM_METRIC_SM_UTIL, semconv.NvidiaGPUSMUtilizationName, true},
	{nvml.GPM_METRIC_SM_OCCUPANCY, semconv.NvidiaGPUSMOccupancyName, true},
	{nvml.GPM_METRIC_ANY_TENSOR_UTIL, semconv.NvidiaGPUTensorActivityName, true},
	{nvml.GPM_METRIC_DRAM_BW_UTIL, semconv.NvidiaGPUDRAMActivityName, true},
	{nvml.GPM_METRIC_PCIE_TX_PER_SEC, semconv.NvidiaGPUPCIeThroughputName, false},
	{nvml.GPM_METRIC_PCIE_RX_PER_SEC, semconv.NvidiaGPUPCIeThroughputName, false},
}

// Indexes into gpmMetrics.
const (
	gpmSM = iota
	gpmOccupancy
	gpmTensor
	gpmDRAM
	gpmPCIeTX
	gpmPCIeRX
)

// Field IDs asked for with nvmlDeviceGetFieldValues.
const (
	fieldInstantPower = nvml.FI_DEV_POWER_INSTANT
	fieldPCIeTX       = nvml.FI_DEV_PCIE_COUNT_TX_BYTES
	fieldPCIeRX       = nvml.FI_DEV_PCIE_COUNT_RX_BYTES
	fieldMemoryTemp   = nvml.FI_DEV_MEMORY_TEMP
)

// limitPoint is one hw.temperature.limit observation, read at discovery.
type limitPoint struct {
	celsius float64
	attrs   []metric.ObserveOption
}

// attrSets holds a GPU's attribute sets, built once at discovery.
type attrSets struct {
	ident       []metric.ObserveOption    // hw.gpu.memory.*: hw.id, hw.name, hw.model, hw.vendor, hw.driver_version
	tasks       [3][]metric.ObserveOption // hw.gpu.utilization: ident + hw.gpu.task general, encoder, decoder
	io          [2][]metric.ObserveOption // hw.gpu.io: ident + network.io.direction
	component   []metric.ObserveOption    // hw.power, hw.energy: hw.id, hw.type, hw.name
	temperature [2][]metric.ObserveOption // hw.temperature: hw.id, hw.name, hw.sensor_location
	errors      [2][]metric.ObserveOption // hw.errors: component + error.type corrected, uncorrected
	status      [3][]metric.ObserveOption // hw.status: component + hw.state ok, degraded, failed
	id          []metric.ObserveOption    // nvidia.*: hw.id
	clocks      [len(clocks)][]metric.ObserveOption
	throttle    [len(throttleReasons)][]metric.ObserveOption
	pcieRate    [2][]metric.ObserveOption
	procMemory  map[int][]metric.ObserveOption
	procUtil    map[int][3][]metric.ObserveOption
}

// states are the hw.state values reported, in attrSets.status order.
var states = [3]State{StateOK, StateDegraded, StateFailed}

func newAttrSets(info Device, pids []int) attrSets {
	set := func(kv ...attribute.KeyValue) []metric.ObserveOption {
		return []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(kv...))}
	}
	id, name := semconv.HwID(info.UUID), semconv.HwName(info.Name)
	ident := []attribute.KeyValue{id, name, semconv.HwModel(info.Model), semconv.HwVendor("NVIDIA"), semconv.HwDriverVersion(info.DriverVersion)}
	with := func(base []attribute.KeyValue, kv ...attribute.KeyValue) []metric.ObserveOption {
		return set(append(slices.Clone(base), kv...)...)
	}
	component := []attribute.KeyValue{id, semconv.HwTypeGPU, name}
	a := attrSets{
		ident:      set(ident...),
		tasks:      [3][]metric.ObserveOption{with(ident, semconv.HwGPUTaskGeneral), with(ident, semconv.HwGPUTaskEncoder), with(ident, semconv.HwGPUTaskDecoder)},
		io:         [2][]metric.ObserveOption{with(ident, semconv.NetworkIODirectionTransmit), with(ident, semconv.NetworkIODirectionReceive)},
		component:  set(component...),
		errors:     [2][]metric.ObserveOption{with(component, semconv.ErrorType("corrected")), with(component, semconv.ErrorType("uncorrected"))},
		id:         set(id),
		pcieRate:   [2][]metric.ObserveOption{set(id, semconv.NetworkIODirectionTransmit), set(id, semconv.NetworkIODirectionReceive)},
		procMemory: map[int][]metric.ObserveOption{},
		procUtil:   map[int][3][]metric.ObserveOption{},
	}
	for i, loc := range sensorLocations {
		a.temperature[i] = set(id, name, semconv.HwSensorLocation(loc))
	}
	for i, st := range states {
		a.status[i] = with(component, semconv.HwState(string(st)))
	}
	for i, c := range clocks {
		a.clocks[i] = set(id, c.attr)
	}
	for i, t := range throttleReasons {
		a.throttle[i] = set(id, t.attr)
	}
	for _, pid := range pids {
		p := semconv.ProcessPID(pid)
		a.procMemory[pid] = set(id, p)
		a.procUtil[pid] = [3][]metric.ObserveOption{set(id, p, semconv.HwGPUTaskGeneral), set(id, p, semconv.HwGPUTaskEncoder), set(id, p, semconv.HwGPUTaskDecoder)}
	}
	return a
}

// gpu is one identified GPU.
type gpu struct {
	index int
	dev   nvml.Device
	info  Device // identity; the state lives below
	attrs attrSets

	// set at discovery, read-only after
	limits       []limitPoint
	throttleMask uint64
	eventReasons bool // nvmlDeviceGetCurrentClocksEventReasons rather than ...ThrottleReasons

	// busy is set while a reading goroutine runs: at most one per GPU.
	busy atomic.Bool

	// owned by the reading goroutine (the holder of busy)
	skip         [numReadings]bool
	failures     procfs.Failures
	fields       []uint32
	pcieSeen     [2]bool
	pcieLast     [2]uint64
	pcieTotal    [2]uint64
	throughputAt time.Time
	procTS       uint64
	procs        map[int]procSet // WithAllProcesses: the sets of the processes seen; the reading goroutine's own
	gpm          *gpmState

	mu          sync.Mutex // guards the fields below
	state       State
	err         error
	unsupported []reading
}

// unsupport remembers that the GPU does not offer a reading.
func (g *gpu) unsupport(id reading) {
	if g.skip[id] {
		return
	}
	g.skip[id] = true
	g.mu.Lock()
	g.unsupported = append(g.unsupported, id)
	g.mu.Unlock()
}

// device returns the GPU's description with its current state.
func (g *gpu) device() Device {
	d := g.info
	g.mu.Lock()
	defer g.mu.Unlock()
	d.State, d.Err = g.state, g.err
	for _, id := range g.unsupported {
		d.Unsupported = append(d.Unsupported, readingNames[id])
	}
	return d
}

// setState records the state a collection found.
func (g *gpu) setState(st State, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == StateFailed {
		return // for good
	}
	g.state, g.err = st, err
}

func (g *gpu) failed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state == StateFailed
}

// lost reports whether an NVML return code means the GPU is gone.
func lost(ret nvml.Return) bool {
	switch ret {
	case nvml.ERROR_GPU_IS_LOST, nvml.ERROR_RESET_REQUIRED, nvml.ERROR_UNKNOWN, nvml.ERROR_GPU_NOT_FOUND:
		return true
	}
	return false
}

// check records the outcome of an NVML call made for reading id and
// reports whether its value can be used: NOT_SUPPORTED (or a function the
// driver lacks, or no permission) is remembered and never asked again; a
// lost GPU fails the sample; other errors are reported once.
func (g *gpu) check(s *sample, id reading, ret nvml.Return) bool {
	switch {
	case ret == nvml.SUCCESS:
		g.failures.OK(int(id))
		return true
	case ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_FUNCTION_NOT_FOUND || ret == nvml.ERROR_NO_PERMISSION:
		g.unsupport(id)
	case lost(ret):
		if s.state != StateFailed {
			s.state = StateFailed
			s.err = fmt.Errorf("nvml: GPU %d (%s): %s returned %v; the GPU is no longer queried", g.index, g.info.UUID, readingNames[id], ret)
		}
	default:
		g.failures.Fail(int(id), fmt.Errorf("nvml: GPU %d (%s): read %s: %v", g.index, g.info.UUID, readingNames[id], ret))
	}
	return false
}

// read takes one sample of every reading that is on and offered. It runs
// on the GPU's reading goroutine and may block as long as NVML does.
func (g *gpu) read(r *Receiver) *sample {
	s := &sample{state: StateOK, at: r.cfg.now()}
	steps := []func(*gpu, *Receiver, *sample){
		(*gpu).readUtilization,
		(*gpu).readMemory,
		(*gpu).readFieldsAndPower,
		(*gpu).readTemperature,
		(*gpu).readEnergy,
		(*gpu).readClocks,
		(*gpu).readThrottle,
		(*gpu).readECC,
		(*gpu).readProcesses,
		(*gpu).readGPM,
	}
	for _, step := range steps {
		step(g, r, s)
		if s.state == StateFailed {
			break
		}
	}
	s.errs = g.failures.Err()
	return s
}

func (g *gpu) readUtilization(r *Receiver, s *sample) {
	if (r.inst.utilization != nil || r.inst.memActivity != nil) && !g.skip[rUtilization] {
		u, ret := g.dev.GetUtilizationRates()
		if g.check(s, rUtilization, ret) {
			s.utilization, s.memActivity = some(float64(u.Gpu)/100), some(float64(u.Memory)/100)
		}
	}
	if r.inst.utilization == nil {
		return
	}
	if !g.skip[rEncoder] {
		u, _, ret := g.dev.GetEncoderUtilization()
		if g.check(s, rEncoder, ret) {
			s.encoder = some(float64(u) / 100)
		}
	}
	if !g.skip[rDecoder] && s.state != StateFailed {
		u, _, ret := g.dev.GetDecoderUtilization()
		if g.check(s, rDecoder, ret) {
			s.decoder = some(float64(u) / 100)
		}
	}
}

func (g *gpu) readMemory(r *Receiver, s *sample) {
	if r.inst.memUsage == nil && r.inst.memLimit == nil && r.inst.memUtilization == nil {
		return
	}
	if !g.skip[rMemoryV2] {
		m, ret := g.dev.GetMemoryInfo_v2()
		if g.check(s, rMemoryV2, ret) {
			s.memUsed, s.memTotal = some(clampInt64(m.Used)), some(clampInt64(m.Total))
			return
		}
		if !g.skip[rMemoryV2] {
			return // a passing failure: try v2 again next time
		}
	}
	if !g.skip[rMemory] && s.state != StateFailed {
		m, ret := g.dev.GetMemoryInfo()
		if g.check(s, rMemory, ret) {
			s.memUsed, s.memTotal = some(clampInt64(m.Used)), some(clampInt64(m.Total))
		}
	}
}

// readFieldsAndPower reads the field values in one call (instant power,
// PCIe byte counters, memory temperature), then the power and PCIe
// readings that replace the fields a GPU does not offer.
func (g *gpu) readFieldsAndPower(r *Receiver, s *sample) {
	type result struct {
		id       uint32
		v, width uint64
	}
	var results [4]result // at most one per field asked for
	n := 0
	if len(g.fields) > 0 && !g.skip[rFieldValues] {
		vals := make([]nvml.FieldValue, len(g.fields))
		for i, f := range g.fields {
			vals[i].FieldId = f
		}
		if g.check(s, rFieldValues, g.dev.GetFieldValues(vals)) {
			for _, v := range vals {
				id := fieldReading(v.FieldId)
				if ret := nvml.Return(v.NvmlReturn); ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_FUNCTION_NOT_FOUND {
					g.unsupport(id)
				} else if g.check(s, id, ret) && n < len(results) {
					if x, width, ok := fieldValue(v); ok {
						results[n] = result{id: v.FieldId, v: x, width: width}
						n++
					}
				}
			}
			// Stop asking for what the GPU does not offer; without both
			// PCIe counters, traffic comes from the throughput reading.
			g.fields = slices.DeleteFunc(g.fields, func(f uint32) bool { return g.skip[fieldReading(f)] })
		}
		if s.state == StateFailed {
			return
		}
	}
	field := func(id uint32) (opt[uint64], uint64) {
		for _, res := range results[:n] {
			if res.id == id {
				return some(res.v), res.width
			}
		}
		return opt[uint64]{}, 0
	}

	if r.inst.power != nil {
		if p, _ := field(fieldInstantPower); p.ok {
			s.power = some(float64(p.v) / 1000)
		} else if g.skip[rInstantPower] && !g.skip[rPower] {
			mw, ret := g.dev.GetPowerUsage()
			if g.check(s, rPower, ret) {
				s.power = some(float64(mw) / 1000)
			}
		}
	}
	if t, _ := field(fieldMemoryTemp); t.ok {
		s.memTemperature = some(float64(t.v))
	}
	if r.inst.io == nil || s.state == StateFailed {
		return
	}
	if g.skip[rPCIeCounters] {
		g.integrateThroughput(s)
		return
	}
	tx, wtx := field(fieldPCIeTX)
	rx, wrx := field(fieldPCIeRX)
	if tx.ok && rx.ok {
		g.advancePCIe(transmit, tx.v, wtx)
		g.advancePCIe(receive, rx.v, wrx)
		s.pcie = [2]opt[int64]{some(clampInt64(g.pcieTotal[transmit])), some(clampInt64(g.pcieTotal[receive]))}
	}
}

// fieldReading returns the reading a field ID serves.
func fieldReading(id uint32) reading {
	switch id {
	case fieldInstantPower:
		return rInstantPower
	case fieldMemoryTemp:
		return rMemoryTemperature
	}
	return rPCIeCounters
}

// fieldValue decodes a field value as an unsigned integer and returns the
// counter width mask of its type (for counters that wrap).
func fieldValue(v nvml.FieldValue) (uint64, uint64, bool) {
	b := v.Value[:]
	switch nvml.ValueType(v.ValueType) {
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return uint64(binary.NativeEndian.Uint32(b)), math.MaxUint32, true
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return uint64(binary.NativeEndian.Uint16(b)), math.MaxUint16, true
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return binary.NativeEndian.Uint64(b), math.MaxUint64, true
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		if x := int64(binary.NativeEndian.Uint64(b)); x >= 0 {
			return uint64(x), math.MaxInt64, true
		}
	case nvml.VALUE_TYPE_SIGNED_INT:
		if x := int32(binary.NativeEndian.Uint32(b)); x >= 0 {
			return uint64(x), math.MaxInt32, true
		}
	case nvml.VALUE_TYPE_DOUBLE:
		if x := math.Float64frombits(binary.NativeEndian.Uint64(b)); x >= 0 && x < math.MaxInt64 {
			return uint64(x), math.MaxUint64, true
		}
	}
	return 0, 0, false
}

// advancePCIe adds the bytes a PCIe counter moved since the previous
// reading to the running total, across a wrap of the counter at its
// type's width ("Value can be wrapped", says nvml.h).
func (g *gpu) advancePCIe(dir int, raw, mask uint64) {
	if g.pcieSeen[dir] {
		g.pcieTotal[dir] += (raw - g.pcieLast[dir]) & mask
	}
	g.pcieSeen[dir], g.pcieLast[dir] = true, raw
}

// integrateThroughput estimates the PCIe bytes moved since the previous
// reading from the current throughput (KB/s, measured by the driver over
// 20 ms) times the time since: an estimate, for GPUs without byte
// counters.
func (g *gpu) integrateThroughput(s *sample) {
	if g.skip[rPCIeThroughput] {
		return
	}
	tx, ret := g.dev.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES)
	if !g.check(s, rPCIeThroughput, ret) {
		return
	}
	rx, ret := g.dev.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES)
	if !g.check(s, rPCIeThroughput, ret) {
		return
	}
	if !g.throughputAt.IsZero() {
		dt := s.at.Sub(g.throughputAt).Seconds()
		g.pcieTotal[transmit] += uint64(float64(tx) * 1024 * dt)
		g.pcieTotal[receive] += uint64(float64(rx) * 1024 * dt)
	}
	g.throughputAt = s.at
	s.pcie = [2]opt[int64]{some(clampInt64(g.pcieTotal[transmit])), some(clampInt64(g.pcieTotal[receive]))}
}

func (g *gpu) readTemperature(r *Receiver, s *sample) {
	if r.inst.temperature == nil || g.skip[rTemperature] {
		return
	}
	c, ret := g.dev.GetTemperature(nvml.TEMPERATURE_GPU)
	if g.check(s, rTemperature, ret) {
		s.temperature = some(float64(c))
	}
}

func (g *gpu) readEnergy(r *Receiver, s *sample) {
	if r.inst.energy == nil || g.skip[rEnergy] {
		return
	}
	mj, ret := g.dev.GetTotalEnergyConsumption()
	if g.check(s, rEnergy, ret) {
		s.energy = some(float64(mj) / 1000)
	}
}

func (g *gpu) readClocks(r *Receiver, s *sample) {
	if r.inst.clock == nil {
		return
	}
	for i, c := range clocks {
		if g.skip[c.id] || s.state == StateFailed {
			continue
		}
		mhz, ret := g.dev.GetClockInfo(c.typ)
		if g.check(s, c.id, ret) {
			s.clocks[i] = some(int64(mhz) * 1_000_000)
		}
	}
}

func (g *gpu) readThrottle(r *Receiver, s *sample) {
	if r.inst.throttle == nil || g.skip[rThrottle] {
		return
	}
	var reasons uint64
	var ret nvml.Return
	if g.eventReasons {
		reasons, ret = g.dev.GetCurrentClocksEventReasons()
	} else {
		reasons, ret = g.dev.GetCurrentClocksThrottleReasons()
	}
	if g.check(s, rThrottle, ret) {
		s.throttle = some(reasons)
	}
}

func (g *gpu) readECC(r *Receiver, s *sample) {
	if r.inst.errors == nil {
		return
	}
	for i, e := range [2]struct {
		typ nvml.MemoryErrorType
		id  reading
	}{{nvml.MEMORY_ERROR_TYPE_CORRECTED, rECCCorrected}, {nvml.MEMORY_ERROR_TYPE_UNCORRECTED, rECCUncorrected}} {
		if g.skip[e.id] || s.state == StateFailed {
			continue
		}
		n, ret := g.dev.GetTotalEccErrors(e.typ, nvml.AGGREGATE_ECC)
		if g.check(s, e.id, ret) {
			s.ecc[i] = some(clampInt64(n))
		}
	}
}

// notAvailable is NVML_VALUE_NOT_AVAILABLE as an unsigned long long: the
// memory of a process NVML cannot see (as in some containers).
const notAvailable = math.MaxUint64

func (g *gpu) readProcesses(r *Receiver, s *sample) {
	if r.inst.procMemory == nil && r.inst.procUtil == nil {
		return
	}
	if r.cfg.allProcs {
		defer g.forgetProcesses(s)
	}
	running := map[int]bool{}
	if !g.skip[rProcesses] {
		procs, ret := g.dev.GetComputeRunningProcesses()
		if !g.check(s, rProcesses, ret) {
			return
		}
		for _, p := range procs {
			pid := int(p.Pid)
			if !g.wantProcess(r, s, pid) {
				continue
			}
			running[pid] = true
			if p.UsedGpuMemory != notAvailable {
				if s.procMemory == nil {
					s.procMemory = map[int]int64{}
				}
				s.procMemory[pid] += clampInt64(p.UsedGpuMemory)
			}
		}
	}
	if r.inst.procUtil == nil || g.skip[rProcessUtilization] {
		return
	}
	samples, ret := g.dev.GetProcessUtilization(g.procTS)
	if ret == nvml.ERROR_NOT_FOUND {
		samples, ret = nil, nvml.SUCCESS // no sample since the last call
	}
	if !g.check(s, rProcessUtilization, ret) {
		return
	}
	latest := map[int]nvml.ProcessUtilizationSample{}
	for _, p := range samples {
		g.procTS = max(g.procTS, p.TimeStamp)
		pid := int(p.Pid)
		if !g.wantProcess(r, s, pid) {
			continue
		}
		if prev, ok := latest[pid]; !ok || p.TimeStamp >= prev.TimeStamp {
			latest[pid] = p
		}
	}
	for pid := range s.procSets { // the wanted processes running or sampled
		p, sampled := latest[pid]
		if !sampled && !running[pid] {
			continue // not on this GPU
		}
		if s.procUtil == nil {
			s.procUtil = map[int][3]float64{}
		}
		s.procUtil[pid] = [3]float64{float64(p.SmUtil) / 100, float64(p.EncUtil) / 100, float64(p.DecUtil) / 100}
	}
}

func clampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
