//go:build linux && cgo

package nvml

// reading names one NVML query of a GPU, for remembering which ones the
// GPU does not offer and for reporting each failure once.
type reading int

const (
	rUtilization reading = iota
	rEncoder
	rDecoder
	rMemoryV2
	rMemory
	rTemperature
	rInstantPower // field NVML_FI_DEV_POWER_INSTANT
	rPower        // nvmlDeviceGetPowerUsage
	rEnergy
	rClockGraphics
	rClockSM
	rClockMemory
	rClockVideo
	rThrottle
	rPCIeCounters // fields NVML_FI_DEV_PCIE_COUNT_TX/RX_BYTES
	rPCIeThroughput
	rECCCorrected
	rECCUncorrected
	rProcesses
	rProcessUtilization
	rGPM
	rMemoryTemperature // field NVML_FI_DEV_MEMORY_TEMP
	rFieldValues       // the nvmlDeviceGetFieldValues call itself
	numReadings
)

// readingNames are the plain-words names Device.Unsupported lists.
var readingNames = [numReadings]string{
	rUtilization:        "utilization",
	rEncoder:            "encoder utilization",
	rDecoder:            "decoder utilization",
	rMemoryV2:           "memory info v2 (using v1)",
	rMemory:             "memory info",
	rTemperature:        "temperature",
	rInstantPower:       "instant power (using the power usage reading)",
	rPower:              "power usage",
	rEnergy:             "total energy",
	rClockGraphics:      "graphics clock",
	rClockSM:            "SM clock",
	rClockMemory:        "memory clock",
	rClockVideo:         "video clock",
	rThrottle:           "clock throttle reasons",
	rPCIeCounters:       "PCIe byte counters (integrating PCIe throughput)",
	rPCIeThroughput:     "PCIe throughput",
	rECCCorrected:       "corrected ECC errors",
	rECCUncorrected:     "uncorrected ECC errors",
	rProcesses:          "running processes",
	rProcessUtilization: "process utilization",
	rGPM:                "GPM metrics",
	rMemoryTemperature:  "memory temperature",
	rFieldValues:        "field values",
}
