//go:build linux && cgo

package nvml

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/lifecycle"
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

	// cb is the callback. The callback does not take its lock (it waits
	// on collectMu); init and Shutdown do, and it guards inited.
	cb     lifecycle.Callback
	inited bool // nvml.Init succeeded and Shutdown is owed
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
	sel, err := cfg.Select("nvml", Metrics())
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
	ins := lifecycle.NewInstruments(r.cfg.Meter(ScopeName, Version()), sel)
	in := &r.inst
	lifecycle.Create(ins, semconv.HwGPUUtilizationName, &in.utilization, semconv.NewHwGPUUtilization)
	lifecycle.Create(ins, semconv.HwGPUMemoryUsageName, &in.memUsage, semconv.NewHwGPUMemoryUsage)
	lifecycle.Create(ins, semconv.HwGPUMemoryLimitName, &in.memLimit, semconv.NewHwGPUMemoryLimit)
	lifecycle.Create(ins, semconv.HwGPUMemoryUtilizationName, &in.memUtilization, semconv.NewHwGPUMemoryUtilization)
	lifecycle.Create(ins, semconv.NvidiaGPUMemoryActivityName, &in.memActivity, semconv.NewNvidiaGPUMemoryActivity)
	lifecycle.Create(ins, semconv.HwTemperatureName, &in.temperature, semconv.NewHwTemperature)
	lifecycle.Create(ins, semconv.HwTemperatureLimitName, &in.tempLimit, semconv.NewHwTemperatureLimit)
	lifecycle.Create(ins, semconv.HwPowerName, &in.power, semconv.NewHwPower)
	lifecycle.Create(ins, semconv.HwEnergyName, &in.energy, semconv.NewHwEnergy)
	lifecycle.Create(ins, semconv.HwGPUIOName, &in.io, semconv.NewHwGPUIO)
	lifecycle.Create(ins, semconv.HwErrorsName, &in.errors, semconv.NewHwErrors)
	lifecycle.Create(ins, semconv.HwStatusName, &in.status, semconv.NewHwStatus)
	lifecycle.Create(ins, semconv.NvidiaGPUClockFrequencyName, &in.clock, semconv.NewNvidiaGPUClockFrequency)
	lifecycle.Create(ins, semconv.NvidiaGPUThrottleActiveName, &in.throttle, semconv.NewNvidiaGPUThrottleActive)
	lifecycle.Create(ins, semconv.NvidiaGPUProcessMemoryUsageName, &in.procMemory, semconv.NewNvidiaGPUProcessMemoryUsage)
	lifecycle.Create(ins, semconv.NvidiaGPUProcessUtilizationName, &in.procUtil, semconv.NewNvidiaGPUProcessUtilization)
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
		lifecycle.Create(ins, m.metric, &in.gpm[i], gpmNew[m.metric])
	}
	return r.cb.Register("nvml", ins, r.observe)
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
	if err != nil {
		r.cb.Stop() // nothing to observe: unregister the callback
	}
	r.cb.Lock()
	defer r.cb.Unlock()
	defer close(r.ready)
	r.gpus, r.devices, r.initErr = gpus, devices, err
	if r.cb.Down() { // Shutdown was called, or initialization failed
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
	r.cb.Lock()
	r.inited = true
	r.cb.Unlock()
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
