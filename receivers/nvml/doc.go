// Package nvml reads NVIDIA GPUs through NVML, the NVIDIA Management
// Library that ships with the driver (libnvidia-ml.so.1), using go-nvml's
// nvml.Interface: the real library by default, go-nvml's mock package in
// tests (WithInterface). It needs Linux and cgo; other builds get a
// receiver that reports itself unsupported.
//
// # Metrics
//
// Every GPU is identified by hw.id = its NVML UUID, hw.name = "gpu" and
// its NVML index ("gpu0"), hw.model = its product name ("NVIDIA H100
// 80GB HBM3"), hw.vendor = "NVIDIA" and hw.driver_version; each metric
// carries those its registry entry lists (docs/metrics.md).
//
//	| Metric                          | Instrument                    | Unit | Extra attributes                | NVML source                                         |
//	|---------------------------------|-------------------------------|------|---------------------------------|-----------------------------------------------------|
//	| hw.gpu.utilization              | Float64ObservableGauge        | 1    | hw.gpu.task general/encoder/decoder | utilization rates; encoder and decoder utilization |
//	| nvidia.gpu.memory.activity      | Float64ObservableGauge        | 1    |                                 | utilization rates (memory controller busy time)     |
//	| hw.gpu.memory.usage             | Int64ObservableUpDownCounter  | By   |                                 | memory info (v2, else v1)                           |
//	| hw.gpu.memory.limit             | Int64ObservableUpDownCounter  | By   |                                 | memory info                                         |
//	| hw.gpu.memory.utilization       | Float64ObservableGauge        | 1    |                                 | memory used / total                                 |
//	| hw.temperature                  | Float64ObservableGauge        | Cel  | hw.sensor_location gpu/memory   | temperature; field NVML_FI_DEV_MEMORY_TEMP          |
//	| hw.temperature.limit            | Float64ObservableGauge        | Cel  | hw.sensor_location, hw.limit_type | temperature thresholds, read once                 |
//	| hw.power                        | Float64ObservableGauge        | W    | hw.type gpu                     | field NVML_FI_DEV_POWER_INSTANT, else power usage   |
//	| hw.energy                       | Float64ObservableCounter      | J    | hw.type gpu                     | total energy consumption (since the driver loaded)  |
//	| hw.gpu.io                       | Int64ObservableCounter        | By   | network.io.direction            | fields NVML_FI_DEV_PCIE_COUNT_TX/RX_BYTES, else PCIe throughput integrated |
//	| hw.errors                       | Int64ObservableCounter        | {error} | hw.type gpu, error.type corrected/uncorrected | aggregate ECC error counts     |
//	| hw.status                       | Int64ObservableUpDownCounter  | 1    | hw.type gpu, hw.state ok/degraded/failed | the receiver's view: see Failures         |
//	| nvidia.gpu.clock.frequency      | Int64ObservableGauge          | Hz   | nvidia.clock.type               | clock info: graphics, SM, memory, video             |
//	| nvidia.gpu.throttle.active      | Float64ObservableGauge        | 1    | nvidia.throttle.reason          | current clocks event (throttle) reasons             |
//	| nvidia.gpu.process.memory.usage | Int64ObservableGauge          | By   | process.pid                     | running compute processes                           |
//	| nvidia.gpu.process.utilization  | Float64ObservableGauge        | 1    | process.pid, hw.gpu.task        | process utilization samples                         |
//	| nvidia.gpu.sm.utilization       | Float64ObservableGauge        | 1    |                                 | GPM: SM utilization                                 |
//	| nvidia.gpu.sm.occupancy         | Float64ObservableGauge        | 1    |                                 | GPM: SM occupancy                                   |
//	| nvidia.gpu.tensor.activity      | Float64ObservableGauge        | 1    |                                 | GPM: any tensor utilization                         |
//	| nvidia.gpu.dram.activity        | Float64ObservableGauge        | 1    |                                 | GPM: DRAM bandwidth utilization                     |
//	| nvidia.gpu.pcie.throughput      | Float64ObservableGauge        | By/s | network.io.direction            | GPM: PCIe TX/RX per second                          |
//
// Notes on the readings:
//
//   - hw.power is instantaneous where the GPU offers the
//     NVML_FI_DEV_POWER_INSTANT field. Otherwise it is nvmlDeviceGetPowerUsage,
//     which on Ampere (except GA100) and newer GPUs is an average over the
//     last second and on older ones instantaneous.
//   - hw.energy is the driver's own counter, in joules since the driver
//     loaded: only differences are meaningful (Snapshot before and after,
//     for joules per inference). It does not wrap.
//   - hw.gpu.io is bytes since the receiver started. Where the GPU has
//     PCIe byte counters (fields, recent drivers) they are followed across
//     their wraps; otherwise the PCIe throughput (KB/s, which the driver
//     measures over 20 ms; KB taken as 1024 bytes) is multiplied by the
//     time between collections: an estimate.
//   - hw.gpu.memory.utilization is the fraction of memory in use, as
//     upstream defines it. The memory controller's busy time, which NVML
//     also calls memory utilization, is nvidia.gpu.memory.activity.
//   - nvidia.gpu.throttle.active has one point per reason the GPU supports
//     (1 active, 0 not).
//   - Process readings are for the calling process, or WithPIDs; a process
//     not on a GPU has no point there. A process on the GPU without a
//     utilization sample since the last collection reads 0.
//   - GPM (Hopper and newer) metrics are computed between two samples, one
//     per collection: they are averages over the collection interval, from
//     the second collection on.
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
