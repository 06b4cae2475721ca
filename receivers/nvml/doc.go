// Package nvml reads NVIDIA GPUs through NVML, the NVIDIA Management
// Library that ships with the driver (libnvidia-ml.so.1), using go-nvml's
// nvml.Interface: the real library by default, go-nvml's mock package in
// tests (WithInterface). It needs Linux and cgo; other builds get a
// receiver that reports itself unsupported.
//
// # Metrics
//
// [Metrics] lists what the receiver emits, generated from the semconv
// registry. Every GPU is identified by hw.id = its NVML UUID, hw.name =
// "gpu" and its NVML index ("gpu0"), hw.model = its product name ("NVIDIA
// H100 80GB HBM3"), hw.vendor = "NVIDIA" and hw.driver_version; each
// metric carries those its table lists. Where the readings come from:
//
//   - Utilization rates give hw.gpu.utilization{general} and
//     nvidia.gpu.memory.activity, the memory controller's busy time (which
//     NVML also calls memory utilization; hw.gpu.memory.utilization is the
//     fraction of memory in use, as upstream defines it). Encoder and
//     decoder utilization give hw.gpu.utilization{encoder, decoder}.
//   - Memory info (v2, else v1) gives hw.gpu.memory.usage and .limit, and
//     their ratio .utilization.
//   - The temperature, and the field NVML_FI_DEV_MEMORY_TEMP, give
//     hw.temperature{gpu, memory}; the temperature thresholds, read once,
//     hw.temperature.limit.
//   - hw.power is instantaneous where the GPU offers the
//     NVML_FI_DEV_POWER_INSTANT field. Otherwise it is nvmlDeviceGetPowerUsage,
//     which on Ampere (except GA100) and newer GPUs is an average over the
//     last second and on older ones instantaneous.
//   - hw.energy is the driver's total energy consumption counter, in joules
//     since the driver loaded: only differences are meaningful (Snapshot
//     before and after, for joules per inference). It does not wrap.
//   - hw.gpu.io is bytes since the receiver started. Where the GPU has
//     PCIe byte counters (the fields NVML_FI_DEV_PCIE_COUNT_TX/RX_BYTES,
//     recent drivers) they are followed across their wraps; otherwise the
//     PCIe throughput (KB/s, which the driver measures over 20 ms; KB taken
//     as 1024 bytes) is multiplied by the time between collections: an
//     estimate.
//   - hw.errors are the aggregate ECC error counts, corrected and
//     uncorrected; hw.status is the receiver's own view (see Failures).
//   - nvidia.gpu.clock.frequency is the clock info of the graphics, SM,
//     memory and video clocks; nvidia.gpu.throttle.active has one point per
//     clocks event (throttle) reason the GPU supports (1 active, 0 not).
//   - Process readings (running compute processes, process utilization
//     samples) are for the calling process, or WithPIDs; a process not on
//     a GPU has no point there. A process on the GPU without a utilization
//     sample since the last collection reads 0.
//   - The GPM metrics (Hopper and newer: SM utilization and occupancy, any
//     tensor activity, DRAM bandwidth, PCIe TX/RX per second) are computed
//     between two samples, one per collection: they are averages over the
//     collection interval, from the second collection on.
//
// # Startup
//
// nvmlInit can take seconds (more with many GPUs and no persistence
// daemon), and the agent must start within 50 ms. So New registers the
// instruments and returns at once; NVML is initialized and the GPUs
// identified on a goroutine. Until that finishes the callback observes
// nothing. Receiver.Ready waits for it and returns nil, or the reason
// there are no GPUs to read (an error matching receivers.ErrUnsupported;
// the callback is then unregistered). With the default library New first
// checks, in about a millisecond, that libnvidia-ml.so.1 can be loaded at
// all, and returns the unsupported error directly when it cannot: the
// common case on machines without an NVIDIA driver.
//
// # Failures
//
//   - NOT_SUPPORTED (or a function the installed driver lacks, looked up
//     once: go-nvml binds functions lazily and calling a missing one would
//     abort the process) for one reading: that reading is left out and
//     never asked for again. Device.Unsupported lists them.
//   - GPU_IS_LOST, RESET_REQUIRED, GPU_NOT_FOUND or UNKNOWN: the GPU is
//     marked failed (hw.status{hw.state="failed"} 1), its other readings
//     stop, and it is never queried again.
//   - A hung driver: each GPU is read on its own goroutine, and a
//     collection waits at most the timeout (WithTimeout, 250 ms by
//     default, or the collection's context deadline if sooner). A GPU
//     that has not answered is reported degraded and left out; until its
//     call returns it is skipped at once, so at most one call per GPU is
//     ever outstanding. When the call returns, the GPU is read again.
//   - Other errors leave the reading out of that collection and are
//     returned from the callback once, not on every collection.
//
// hw.status has one point per state (ok, degraded, failed) with 1 for the
// current one, as upstream specifies for this state-set metric.
package nvml
