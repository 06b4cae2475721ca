//go:build linux && cgo

package nvml

import (
	"encoding/binary"
	"os"
	"sync"
	"sync/atomic"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// A scripted machine for the tests: go-nvml's own mocks (mock.Interface,
// mock.Device), with two GPUs. The H100 offers everything ortel reads; the
// T4 is an older GPU without GPM, instant power, PCIe byte counters or
// ECC. Values change from one collection to the next as set by step.

const (
	h100UUID = "GPU-5c1f0a3e-8d2b-4f6a-9e71-0b3c2d4e5f60"
	t4UUID   = "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"
	otherPID = 999999 // another process on the GPU, never reported
)

// gpuScript holds what a scripted GPU answers. Its fields may change
// between collections (under mu); lost and hang change its behaviour.
type gpuScript struct {
	mu      sync.Mutex
	energy  uint64 // mJ
	pcieTX  uint64 // bytes (unsigned long long field)
	pcieRX  uint32 // bytes (unsigned int field: wraps at 2^32)
	lost    atomic.Bool
	hang    atomic.Bool
	release chan struct{} // a hung call returns when this closes
	hung    chan struct{} // if not nil, receives when a call starts to hang
}

func (s *gpuScript) set(f func(*gpuScript)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *gpuScript) get() gpuScript {
	s.mu.Lock()
	defer s.mu.Unlock()
	return gpuScript{energy: s.energy, pcieTX: s.pcieTX, pcieRX: s.pcieRX}
}

func fieldU32(id uint32, v uint32) nvml.FieldValue {
	f := nvml.FieldValue{FieldId: id, ValueType: uint32(nvml.VALUE_TYPE_UNSIGNED_INT)}
	binary.NativeEndian.PutUint32(f.Value[:], v)
	return f
}

func fieldU64(id uint32, v uint64) nvml.FieldValue {
	f := nvml.FieldValue{FieldId: id, ValueType: uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)}
	binary.NativeEndian.PutUint64(f.Value[:], v)
	return f
}

// newH100 scripts an NVIDIA H100 80GB HBM3: 700 W limit, GPM, instant
// power, PCIe byte counters, ECC.
func newH100(s *gpuScript) *mock.Device {
	pid := uint32(os.Getpid())
	return &mock.Device{
		GetUUIDFunc:                        func() (string, nvml.Return) { return h100UUID, nvml.SUCCESS },
		GetNameFunc:                        func() (string, nvml.Return) { return "NVIDIA H100 80GB HBM3", nvml.SUCCESS },
		GetEnforcedPowerLimitFunc:          func() (uint32, nvml.Return) { return 700_000, nvml.SUCCESS },
		GetSupportedClocksEventReasonsFunc: func() (uint64, nvml.Return) { return nvml.ClocksEventReasonAll, nvml.SUCCESS },
		GetTemperatureThresholdFunc: func(t nvml.TemperatureThresholds) (uint32, nvml.Return) {
			switch t {
			case nvml.TEMPERATURE_THRESHOLD_SHUTDOWN:
				return 92, nvml.SUCCESS
			case nvml.TEMPERATURE_THRESHOLD_SLOWDOWN:
				return 89, nvml.SUCCESS
			case nvml.TEMPERATURE_THRESHOLD_GPU_MAX:
				return 87, nvml.SUCCESS
			case nvml.TEMPERATURE_THRESHOLD_MEM_MAX:
				return 95, nvml.SUCCESS
			}
			return 0, nvml.ERROR_NOT_SUPPORTED
		},
		GpmQueryDeviceSupportFunc: func() (nvml.GpmSupport, nvml.Return) {
			return nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION, IsSupportedDevice: 1}, nvml.SUCCESS
		},
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) {
			if s.lost.Load() {
				return nvml.Utilization{}, nvml.ERROR_GPU_IS_LOST
			}
			return nvml.Utilization{Gpu: 87, Memory: 41}, nvml.SUCCESS
		},
		GetEncoderUtilizationFunc: func() (uint32, uint32, nvml.Return) { return 0, 167_000, nvml.SUCCESS },
		GetDecoderUtilizationFunc: func() (uint32, uint32, nvml.Return) { return 5, 167_000, nvml.SUCCESS },
		GetMemoryInfo_v2Func: func() (nvml.Memory_v2, nvml.Return) {
			return nvml.Memory_v2{Total: 85_520_809_984, Used: 21_380_202_496, Free: 85_520_809_984 - 21_380_202_496}, nvml.SUCCESS
		},
		GetTemperatureFunc: func(nvml.TemperatureSensors) (uint32, nvml.Return) {
			if s.hang.Load() {
				if s.hung != nil {
					s.hung <- struct{}{}
				}
				<-s.release
			}
			return 45, nvml.SUCCESS
		},
		GetFieldValuesFunc: func(vals []nvml.FieldValue) nvml.Return {
			cur := s.get()
			for i, v := range vals {
				switch v.FieldId {
				case nvml.FI_DEV_POWER_INSTANT:
					vals[i] = fieldU32(v.FieldId, 312_500)
				case nvml.FI_DEV_PCIE_COUNT_TX_BYTES:
					vals[i] = fieldU64(v.FieldId, cur.pcieTX)
				case nvml.FI_DEV_PCIE_COUNT_RX_BYTES:
					vals[i] = fieldU32(v.FieldId, cur.pcieRX)
				case nvml.FI_DEV_MEMORY_TEMP:
					vals[i] = fieldU32(v.FieldId, 52)
				default:
					vals[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
				}
			}
			return nvml.SUCCESS
		},
		GetPowerUsageFunc:             func() (uint32, nvml.Return) { return 300_000, nvml.SUCCESS },
		GetTotalEnergyConsumptionFunc: func() (uint64, nvml.Return) { return s.get().energy, nvml.SUCCESS },
		GetClockInfoFunc: func(c nvml.ClockType) (uint32, nvml.Return) {
			return [...]uint32{1980, 1980, 2619, 1755}[c], nvml.SUCCESS
		},
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) { return nvml.ClocksEventReasonSwPowerCap, nvml.SUCCESS },
		GetTotalEccErrorsFunc: func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
			if t == nvml.MEMORY_ERROR_TYPE_CORRECTED {
				return 3, nvml.SUCCESS
			}
			return 0, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: pid, UsedGpuMemory: 2 << 30}, {Pid: otherPID, UsedGpuMemory: 10 << 30}}, nvml.SUCCESS
		},
		GetProcessUtilizationFunc: func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			return []nvml.ProcessUtilizationSample{
				{Pid: pid, TimeStamp: last + 10, SmUtil: 60},
				{Pid: pid, TimeStamp: last + 20, SmUtil: 80, DecUtil: 5},
				{Pid: otherPID, TimeStamp: last + 20, SmUtil: 10},
			}, nvml.SUCCESS
		},
	}
}

// newT4 scripts a Tesla T4: no GPM, no instant power or PCIe counters
// (fields not supported), no ECC counts, memory info v1 only, an idle GPU
// with no process of ours.
func newT4() *mock.Device {
	return &mock.Device{
		GetUUIDFunc:               func() (string, nvml.Return) { return t4UUID, nvml.SUCCESS },
		GetNameFunc:               func() (string, nvml.Return) { return "Tesla T4", nvml.SUCCESS },
		GetEnforcedPowerLimitFunc: func() (uint32, nvml.Return) { return 70_000, nvml.SUCCESS },
		GetSupportedClocksEventReasonsFunc: func() (uint64, nvml.Return) {
			return nvml.ClocksEventReasonGpuIdle | nvml.ClocksEventReasonSwPowerCap | nvml.ClocksThrottleReasonHwSlowdown, nvml.SUCCESS
		},
		GetTemperatureThresholdFunc: func(t nvml.TemperatureThresholds) (uint32, nvml.Return) {
			if t == nvml.TEMPERATURE_THRESHOLD_SHUTDOWN {
				return 96, nvml.SUCCESS
			}
			return 0, nvml.ERROR_NOT_SUPPORTED
		},
		GpmQueryDeviceSupportFunc: func() (nvml.GpmSupport, nvml.Return) {
			return nvml.GpmSupport{Version: nvml.GPM_SUPPORT_VERSION}, nvml.SUCCESS
		},
		GetUtilizationRatesFunc:   func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{Gpu: 12, Memory: 3}, nvml.SUCCESS },
		GetEncoderUtilizationFunc: func() (uint32, uint32, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED },
		GetDecoderUtilizationFunc: func() (uint32, uint32, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED },
		GetMemoryInfo_v2Func:      func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{Total: 16_106_127_360, Used: 1 << 30, Free: 16_106_127_360 - 1<<30}, nvml.SUCCESS
		},
		GetTemperatureFunc: func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 38, nvml.SUCCESS },
		GetFieldValuesFunc: func(vals []nvml.FieldValue) nvml.Return {
			for i := range vals {
				vals[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
			}
			return nvml.SUCCESS
		},
		GetPowerUsageFunc:                func() (uint32, nvml.Return) { return 27_500, nvml.SUCCESS },
		GetTotalEnergyConsumptionFunc:    func() (uint64, nvml.Return) { return 5_000_000, nvml.SUCCESS },
		GetClockInfoFunc:                 func(c nvml.ClockType) (uint32, nvml.Return) { return [...]uint32{585, 585, 5001, 540}[c], nvml.SUCCESS },
		GetCurrentClocksEventReasonsFunc: func() (uint64, nvml.Return) { return nvml.ClocksEventReasonGpuIdle, nvml.SUCCESS },
		GetPcieThroughputFunc: func(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
			if c == nvml.PCIE_UTIL_TX_BYTES {
				return 1000, nvml.SUCCESS
			}
			return 2000, nvml.SUCCESS
		},
		GetTotalEccErrorsFunc: func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
			return 0, nvml.ERROR_NOT_SUPPORTED
		},
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
		GetProcessUtilizationFunc: func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			return nil, nvml.ERROR_NOT_FOUND
		},
	}
}

// gpmValues are what the scripted GPM returns, by metric ID: percentages
// and MiB/s.
var gpmValues = map[nvml.GpmMetricId]float64{
	nvml.GPM_METRIC_SM_UTIL:         75.5,
	nvml.GPM_METRIC_SM_OCCUPANCY:    40,
	nvml.GPM_METRIC_ANY_TENSOR_UTIL: 60,
	nvml.GPM_METRIC_DRAM_BW_UTIL:    55,
	nvml.GPM_METRIC_PCIE_TX_PER_SEC: 1200,
	nvml.GPM_METRIC_PCIE_RX_PER_SEC: 3400,
}

// machine is a scripted NVML library with its GPUs.
type machine struct {
	lib     *mock.Interface
	devices []*mock.Device
	samples []*mock.GpmSample
	missing map[string]bool // symbols the "driver" lacks
	mu      sync.Mutex
}

func newMachine(devices ...*mock.Device) *machine {
	m := &machine{devices: devices, missing: map[string]bool{}}
	m.lib = &mock.Interface{
		InitFunc:                   func() nvml.Return { return nvml.SUCCESS },
		ShutdownFunc:               func() nvml.Return { return nvml.SUCCESS },
		DeviceGetCountFunc:         func() (int, nvml.Return) { return len(m.devices), nvml.SUCCESS },
		DeviceGetHandleByIndexFunc: func(i int) (nvml.Device, nvml.Return) { return m.devices[i], nvml.SUCCESS },
		SystemGetDriverVersionFunc: func() (string, nvml.Return) { return "550.54.15", nvml.SUCCESS },
		ExtensionsFunc: func() nvml.ExtendedInterface {
			return &mock.ExtendedInterface{LookupSymbolFunc: func(s string) error {
				m.mu.Lock()
				defer m.mu.Unlock()
				if m.missing[s] {
					return os.ErrNotExist
				}
				return nil
			}}
		},
		GpmSampleAllocFunc: func() (nvml.GpmSample, nvml.Return) {
			s := &mock.GpmSample{FreeFunc: func() nvml.Return { return nvml.SUCCESS }}
			m.mu.Lock()
			m.samples = append(m.samples, s)
			m.mu.Unlock()
			return s, nvml.SUCCESS
		},
		GpmSampleGetFunc: func(nvml.Device, nvml.GpmSample) nvml.Return { return nvml.SUCCESS },
		GpmMetricsGetFunc: func(g *nvml.GpmMetricsGetType) nvml.Return {
			for i := range g.NumMetrics {
				v, ok := gpmValues[nvml.GpmMetricId(g.Metrics[i].MetricId)]
				if !ok {
					g.Metrics[i].NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
					continue
				}
				g.Metrics[i].Value = v
			}
			return nvml.SUCCESS
		},
	}
	return m
}
