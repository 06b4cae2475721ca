package nvml

import (
	"time"

	"github.com/ortel-dev/ortel/semconv"
)

// State is a GPU's operational state as the receiver sees it; it is
// reported as hw.status.
type State string

// The states.
const (
	// StateOK: the GPU answers.
	StateOK State = "ok"
	// StateDegraded: an NVML call to the GPU has not returned within the
	// timeout; the GPU is skipped until it does.
	StateDegraded State = "degraded"
	// StateFailed: NVML said the GPU is lost (fell off the bus, needs a
	// reset, or an unknown error); it is no longer queried.
	StateFailed State = "failed"
)

// Device describes one GPU.
type Device struct {
	// Index is the NVML index (the order nvidia-smi lists GPUs in).
	Index int
	// UUID is NVML's unique ID, such as "GPU-2f0c…"; it is the hw.id.
	UUID string
	// Name is the hw.name: "gpu" and the index, such as "gpu0".
	Name string
	// Model is the product name, such as "NVIDIA H100 80GB HBM3"; it is
	// the hw.model.
	Model string
	// DriverVersion is the NVIDIA driver's version; it is the
	// hw.driver_version.
	DriverVersion string
	// PowerLimitWatts is the power limit the driver enforces, 0 when the
	// GPU does not say.
	PowerLimitWatts float64
	// State is the GPU's state at the last collection.
	State State
	// Err says why the GPU is degraded or failed, or why it could not be
	// identified at all (then UUID is empty and it is never read).
	Err error
	// Unsupported lists the readings this GPU does not offer (NVML
	// answered NOT_SUPPORTED, or the driver lacks the function), in plain
	// words such as "instant power" or "GPM metrics". They are not asked
	// for again.
	Unsupported []string
}

// Quantity names a value in a Sample.
type Quantity string

// The quantities a Sample may hold.
const (
	Utilization   Quantity = semconv.HwGPUUtilizationName            // fraction of time the GPU was busy (general task)
	MemoryUsed    Quantity = semconv.HwGPUMemoryUsageName            // bytes of GPU memory in use
	MemoryLimit   Quantity = semconv.HwGPUMemoryLimitName            // bytes of GPU memory
	Temperature   Quantity = semconv.HwTemperatureName               // degrees Celsius of the GPU die
	Power         Quantity = semconv.HwPowerName                     // watts (instantaneous where offered)
	Energy        Quantity = semconv.HwEnergyName                    // joules since the driver loaded
	SMUtilization Quantity = semconv.NvidiaGPUSMUtilizationName      // fraction, GPM only
	ProcessMemory Quantity = semconv.NvidiaGPUProcessMemoryUsageName // bytes used by the receiver's processes together
)

// Sample is one GPU's readings at one time, as Snapshot returns them.
type Sample struct {
	Device Device
	Time   time.Time
	// Values holds the readings the GPU offered and whose metric is on.
	// Readings that do not exist are absent, never zero.
	Values map[Quantity]float64
}
