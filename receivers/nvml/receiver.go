//go:build linux && cgo

package nvml

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

// instruments are the receiver's instruments; nil when the metric is off.
type instruments struct {
	utilization    metric.Float64ObservableGauge       // hw.gpu.utilization
	memUsage       metric.Int64ObservableUpDownCounter // hw.gpu.memory.usage
	memLimit       metric.Int64ObservableUpDownCounter // hw.gpu.memory.limit
	memUtilization metric.Float64ObservableGauge       // hw.gpu.memory.utilization
	memActivity    metric.Float64ObservableGauge       // nvidia.gpu.memory.activity
	temperature    metric.Float64ObservableGauge       // hw.temperature
	tempLimit      metric.Float64ObservableGauge       // hw.temperature.limit
	power          metric.Float64ObservableGauge       // hw.power
	energy         metric.Float64ObservableCounter     // hw.energy
	io             metric.Int64ObservableCounter       // hw.gpu.io
	errors         metric.Int64ObservableCounter       // hw.errors
	status         metric.Int64ObservableUpDownCounter // hw.status
	clock          metric.Int64ObservableGauge         // nvidia.gpu.clock.frequency
	throttle       metric.Float64ObservableGauge       // nvidia.gpu.throttle.active
	procMemory     metric.Int64ObservableGauge         // nvidia.gpu.process.memory.usage
	procUtil       metric.Float64ObservableGauge       // nvidia.gpu.process.utilization
	gpm            [len(gpmMetrics)]metric.Float64ObservableGauge
}

// metricNames lists every metric the receiver can emit.
var metricNames = []string{
	semconv.HwGPUUtilizationName,
	semconv.HwGPUMemoryUsageName,
	semconv.HwGPUMemoryLimitName,
	semconv.HwGPUMemoryUtilizationName,
	semconv.NvidiaGPUMemoryActivityName,
	semconv.HwTemperatureName,
	semconv.HwTemperatureLimitName,
	semconv.HwPowerName,
	semconv.HwEnergyName,
	semconv.HwGPUIOName,
	semconv.HwErrorsName,
	semconv.HwStatusName,
	semconv.NvidiaGPUClockFrequencyName,
	semconv.NvidiaGPUThrottleActiveName,
	semconv.NvidiaGPUProcessMemoryUsageName,
	semconv.NvidiaGPUProcessUtilizationName,
	semconv.NvidiaGPUSMUtilizationName,
	semconv.NvidiaGPUSMOccupancyName,
	semconv.NvidiaGPUTensorActivityName,
	semconv.NvidiaGPUDRAMActivityName,
	semconv.NvidiaGPUPCIeThroughputName,
}

// Receiver reads NVIDIA GPUs through NVML.
type Receiver struct {
	cfg  config
	lib  nvml.Interface
	pids []int
	inst instruments

	ready     chan struct{} // closed when initialization has finished
	isReady   atomic.Bool   // ready and initErr == nil
	initErr   error         // set before ready is closed
	gpus      []*gpu        // set before ready is closed
	devices   []Device      // GPUs that could not be identified
	collectMu chan struct{} // one collection at a time
	failures  procfs.Failures

	mu       sync.Mutex // guards the fields below
	reg      metric.Registration
	shutdown bool
	inited   bool // nvml.Init succeeded and Shutdown is owed
}

// New returns a receiver that initializes NVML in the background, so it
// returns at once: nvmlInit can take seconds (more with many GPUs and no
// persistence daemon), and the agent's start must not wait for it. The
// instruments are registered now and observe nothing until the GPUs are
// known; Ready waits for that. If initialization then fails (no driver
// loaded, no GPU), the callback is unregistered and Ready returns an
// error matching receivers.ErrUnsupported.
//
// With the default library, New first checks that libnvidia-ml.so.1 can
// be loaded (about a millisecond) and, when it cannot, registers nothing
// and returns an error matching receivers.ErrUnsupported at once.
func New(opts ...Option) (*Receiver, error) {
	cfg := newConfig(opts)
	sel, err := procfs.Select("nvml", metricNames, cfg.all, cfg.overrides)
	if err != nil {
		return nil, err
	}
	lib := cfg.platform.lib
	if lib == nil {
		if err := probeLibrary(); err != nil {
			return nil, receivers.Unsupported("nvml", fmt.Sprintf("the NVIDIA management library %s cannot be loaded: no NVIDIA driver is installed here", libraryName), err)
		}
		lib = nvml.New()
	}
	r := &Receiver{cfg: cfg, lib: lib, pids: cfg.pids, ready: make(chan struct{}), collectMu: make(chan struct{}, 1)}
	if len(r.pids) == 0 {
		r.pids = []int{os.Getpid()}
	}
	if err := r.register(sel); err != nil {
		return nil, err
	}
	go r.init()
	return r, nil
}

// register creates the instruments that are on and registers the
// callback.
func (r *Receiver) register(sel procfs.Selection) error {
	meter := r.cfg.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	var insts []metric.Observable
	var errs []error
	add := func(name string, create func() (metric.Observable, error)) {
		if !sel.On(name) {
			return
		}
		inst, err := create()
		if err != nil {
			errs = append(errs, fmt.Errorf("nvml: create %s: %w", name, err))
			return
		}
		insts = append(insts, inst)
	}
	in := &r.inst
	add(semconv.HwGPUUtilizationName, func() (o metric.Observable, err error) {
		in.utilization, err = semconv.NewHwGPUUtilization(meter)
		return in.utilization, err
	})
	add(semconv.HwGPUMemoryUsageName, func() (o metric.Observable, err error) {
		in.memUsage, err = semconv.NewHwGPUMemoryUsage(meter)
		return in.memUsage, err
	})
	add(semconv.HwGPUMemoryLimitName, func() (o metric.Observable, err error) {
		in.memLimit, err = semconv.NewHwGPUMemoryLimit(meter)
		return in.memLimit, err
	})
	add(semconv.HwGPUMemoryUtilizationName, func() (o metric.Observable, err error) {
		in.memUtilization, err = semconv.NewHwGPUMemoryUtilization(meter)
		return in.memUtilization, err
	})
	add(semconv.NvidiaGPUMemoryActivityName, func() (o metric.Observable, err error) {
		in.memActivity, err = semconv.NewNvidiaGPUMemoryActivity(meter)
		return in.memActivity, err
	})
	add(semconv.HwTemperatureName, func() (o metric.Observable, err error) {
		in.temperature, err = semconv.NewHwTemperature(meter)
		return in.temperature, err
	})
	add(semconv.HwTemperatureLimitName, func() (o metric.Observable, err error) {
		in.tempLimit, err = semconv.NewHwTemperatureLimit(meter)
		return in.tempLimit, err
	})
	add(semconv.HwPowerName, func() (o metric.Observable, err error) {
		in.power, err = semconv.NewHwPower(meter)
		return in.power, err
	})
	add(semconv.HwEnergyName, func() (o metric.Observable, err error) {
		in.energy, err = semconv.NewHwEnergy(meter)
		return in.energy, err
	})
	add(semconv.HwGPUIOName, func() (o metric.Observable, err error) { in.io, err = semconv.NewHwGPUIO(meter); return in.io, err })
	add(semconv.HwErrorsName, func() (o metric.Observable, err error) {
		in.errors, err = semconv.NewHwErrors(meter)
		return in.errors, err
	})
	add(semconv.HwStatusName, func() (o metric.Observable, err error) {
		in.status, err = semconv.NewHwStatus(meter)
		return in.status, err
	})
	add(semconv.NvidiaGPUClockFrequencyName, func() (o metric.Observable, err error) {
		in.clock, err = semconv.NewNvidiaGPUClockFrequency(meter)
		return in.clock, err
	})
	add(semconv.NvidiaGPUThrottleActiveName, func() (o metric.Observable, err error) {
		in.throttle, err = semconv.NewNvidiaGPUThrottleActive(meter)
		return in.throttle, err
	})
	add(semconv.NvidiaGPUProcessMemoryUsageName, func() (o metric.Observable, err error) {
		in.procMemory, err = semconv.NewNvidiaGPUProcessMemoryUsage(meter)
		return in.procMemory, err
	})
	add(semconv.NvidiaGPUProcessUtilizationName, func() (o metric.Observable, err error) {
		in.procUtil, err = semconv.NewNvidiaGPUProcessUtilization(meter)
		return in.procUtil, err
	})
	gpmNew := map[string]func(metric.Meter, ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error){
		semconv.NvidiaGPUSMUtilizationName:  semconv.NewNvidiaGPUSMUtilization,
		semconv.NvidiaGPUSMOccupancyName:    semconv.NewNvidiaGPUSMOccupancy,
		semconv.NvidiaGPUTensorActivityName: semconv.NewNvidiaGPUTensorActivity,
		semconv.NvidiaGPUDRAMActivityName:   semconv.NewNvidiaGPUDRAMActivity,
		semconv.NvidiaGPUPCIeThroughputName: semconv.NewNvidiaGPUPCIeThroughput,
	}
	for i, m := range gpmMetrics {
		if i == gpmPCIeRX { // one instrument for both directions
			in.gpm[i] = in.gpm[gpmPCIeTX]
			continue
		}
		add(m.metric, func() (o metric.Observable, err error) {
			in.gpm[i], err = gpmNew[m.metric](meter)
			return in.gpm[i], err
		})
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if len(insts) == 0 {
		return nil
	}
	reg, err := meter.RegisterCallback(r.observe, insts...)
	if err != nil {
		return fmt.Errorf("nvml: register callback: %w", err)
	}
	r.reg = reg
	return nil
}

// gpmOn reports whether any GPM metric is on.
func (in *instruments) gpmOn() bool {
	for _, g := range in.gpm {
		if g != nil {
			return true
		}
	}
	return false
}

// init initializes NVML and identifies the GPUs, off the caller's path.
func (r *Receiver) init() {
	gpus, devices, err := r.discover()
	r.mu.Lock()
	defer r.mu.Unlock()
	defer close(r.ready)
	r.gpus, r.devices, r.initErr = gpus, devices, err
	if r.shutdown {
		r.releaseLocked()
		return
	}
	if err != nil {
		if r.reg != nil {
			r.reg.Unregister()
			r.reg = nil
		}
		r.releaseLocked()
		return
	}
	r.isReady.Store(true)
}

// discover initializes NVML and identifies every GPU.
func (r *Receiver) discover() ([]*gpu, []Device, error) {
	if ret := r.lib.Init(); ret != nvml.SUCCESS {
		return nil, nil, initError(ret)
	}
	r.mu.Lock()
	r.inited = true
	r.mu.Unlock()
	n, ret := r.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, nil, receivers.Unsupported("nvml", "NVML cannot count the GPUs", ret)
	}
	if n == 0 {
		return nil, nil, receivers.Unsupported("nvml", "the NVIDIA driver is loaded but sees no GPU", nil)
	}
	driver, ret := r.lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		driver = ""
	}
	have := lookupSymbols(r.lib)
	var gpus []*gpu
	var devices []Device
	var errs []error
	for i := range n {
		g, d := r.identify(i, driver, have)
		if g == nil {
			devices = append(devices, d)
			errs = append(errs, d.Err)
			continue
		}
		gpus = append(gpus, g)
	}
	if len(gpus) == 0 {
		return nil, devices, receivers.Unsupported("nvml", fmt.Sprintf("none of the %d GPUs can be identified", n), errors.Join(errs...))
	}
	return gpus, devices, nil
}

// initError says in plain words why nvmlInit failed.
func initError(ret nvml.Return) error {
	reason := "NVML cannot be initialized"
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		reason = fmt.Sprintf("the NVIDIA management library %s cannot be loaded: no NVIDIA driver is installed here", libraryName)
	case nvml.ERROR_DRIVER_NOT_LOADED:
		reason = "the NVIDIA kernel driver is not loaded (no GPU, or the nvidia module failed to load)"
	case nvml.ERROR_NO_PERMISSION:
		reason = "no permission to open the NVIDIA device files (/dev/nvidia*)"
	case nvml.ERROR_LIB_RM_VERSION_MISMATCH:
		reason = "the NVIDIA library and kernel driver versions differ (a driver update without a reboot?)"
	}
	return receivers.Unsupported("nvml", reason, ret)
}

// identify reads what does not change about GPU i: identity, limits,
// supported readings.
func (r *Receiver) identify(i int, driver string, have map[string]bool) (*gpu, Device) {
	info := Device{Index: i, Name: fmt.Sprintf("gpu%d", i), DriverVersion: driver, State: StateFailed}
	fail := func(what string, ret nvml.Return) (*gpu, Device) {
		info.Err = receivers.Unsupported(fmt.Sprintf("nvml GPU %d", i), "NVML cannot "+what, ret)
		return nil, info
	}
	dev, ret := r.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return fail("open it", ret)
	}
	if info.UUID, ret = dev.GetUUID(); ret != nvml.SUCCESS {
		return fail("read its UUID", ret)
	}
	if name, ret := dev.GetName(); ret == nvml.SUCCESS {
		info.Model = name
	}
	if mw, ret := dev.GetEnforcedPowerLimit(); ret == nvml.SUCCESS {
		info.PowerLimitWatts = float64(mw) / 1000
	}
	info.State = StateOK
	g := &gpu{index: i, dev: dev, info: info, state: StateOK, attrs: newAttrSets(info, r.pids)}

	// Readings whose functions the driver may lack.
	for _, need := range []struct {
		id   reading
		syms []string
	}{
		{rMemoryV2, []string{"nvmlDeviceGetMemoryInfo_v2"}},
		{rEnergy, []string{"nvmlDeviceGetTotalEnergyConsumption"}},
		{rFieldValues, []string{"nvmlDeviceGetFieldValues"}},
		{rProcessUtilization, []string{"nvmlDeviceGetProcessUtilization"}},
		{rGPM, []string{"nvmlGpmQueryDeviceSupport", "nvmlGpmSampleAlloc", "nvmlGpmSampleGet", "nvmlGpmMetricsGet"}},
	} {
		for _, s := range need.syms {
			if !have[s] {
				g.unsupport(need.id)
			}
		}
	}

	// Fields, asked for in one call each collection.
	if r.inst.power != nil {
		g.fields = append(g.fields, fieldInstantPower)
	}
	if r.inst.io != nil {
		g.fields = append(g.fields, fieldPCIeTX, fieldPCIeRX)
	}
	if r.inst.temperature != nil {
		g.fields = append(g.fields, fieldMemoryTemp)
	}
	if g.skip[rFieldValues] {
		g.fields = nil
		g.unsupport(rInstantPower)
		g.unsupport(rPCIeCounters)
		g.unsupport(rMemoryTemperature)
	}

	// Throttle reasons: the newer "clocks event" functions where the
	// driver has them, and only the reasons the GPU supports.
	g.eventReasons = have["nvmlDeviceGetCurrentClocksEventReasons"]
	switch {
	case r.inst.throttle == nil:
	case !g.eventReasons && !have["nvmlDeviceGetCurrentClocksThrottleReasons"]:
		g.unsupport(rThrottle)
	default:
		g.throttleMask = allThrottleReasons
		var mask uint64
		ret := nvml.ERROR_FUNCTION_NOT_FOUND
		if have["nvmlDeviceGetSupportedClocksEventReasons"] {
			mask, ret = dev.GetSupportedClocksEventReasons()
		} else if have["nvmlDeviceGetSupportedClocksThrottleReasons"] {
			mask, ret = dev.GetSupportedClocksThrottleReasons()
		}
		if ret == nvml.SUCCESS {
			g.throttleMask = mask & allThrottleReasons
		}
	}

	// Temperature limits: static, read once.
	if r.inst.tempLimit != nil {
		for _, t := range thresholds {
			c, ret := dev.GetTemperatureThreshold(t.typ)
			if ret != nvml.SUCCESS || c == 0 {
				continue
			}
			attrs := attribute.NewSet(semconv.HwID(info.UUID), semconv.HwName(info.Name), semconv.HwSensorLocation(sensorLocations[t.sensor]), t.attr)
			g.limits = append(g.limits, limitPoint{celsius: float64(c), attrs: []metric.ObserveOption{metric.WithAttributeSet(attrs)}})
		}
	}

	// GPM: Hopper and newer.
	if r.inst.gpmOn() && !g.skip[rGPM] {
		support, ret := dev.GpmQueryDeviceSupport()
		switch {
		case ret != nvml.SUCCESS || support.IsSupportedDevice == 0:
			g.unsupport(rGPM)
		default:
			if g.gpm, ret = newGPM(r.lib); ret != nvml.SUCCESS {
				g.unsupport(rGPM)
			}
		}
	}
	return g, info
}
