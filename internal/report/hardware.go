package report

// Hardware summarizes the hardware readings taken during the measured phase
// of a bench (`ortel bench` samples the hardware receivers at IntervalS).
// Readings a machine does not offer are absent, never zero: no GPU means no
// GPUs entries; no energy counter means no Energy entries and
// EnergyUnavailable saying why.
type Hardware struct {
	IntervalS  float64 `json:"interval_s"`
	WallS      float64 `json:"wall_s"`
	Inferences int     `json:"inferences"`

	// Sources lists every hardware source, available or not, with why.
	Sources []HardwareSource `json:"sources"`

	CPU     *CPUUsage     `json:"cpu,omitempty"`
	Memory  *MemoryUsage  `json:"memory,omitempty"`
	Process *ProcessUsage `json:"process,omitempty"`
	GPUs    []GPUUsage    `json:"gpus,omitempty"`

	// Energy has one entry per energy counter (RAPL zone, GPU).
	Energy []EnergyUse `json:"energy,omitempty"`
	// EnergyUnavailable says why there is no energy reading.
	EnergyUnavailable string `json:"energy_unavailable,omitempty"`
	// ReadErrors lists the readings that failed while sampling, once each
	// (a source that worked at the start and then failed).
	ReadErrors []string `json:"read_errors,omitempty"`
	// Temperatures are the highest readings of each sensor.
	Temperatures []TemperatureMax `json:"temperatures,omitempty"`

	// Series is the time series behind the summaries, for charts.
	Series []HardwareSample `json:"series,omitempty"`
}

// HardwareSource is one receiver's availability.
type HardwareSource struct {
	Source    string `json:"source"`
	Available bool   `json:"available"`
	Reason    string `json:"reason"`
}

// CPUUsage is the host's CPU utilization (0 to 1, all CPUs together).
type CPUUsage struct {
	LogicalCPUs     int     `json:"logical_cpus"`
	UtilizationMean float64 `json:"utilization_mean"`
	UtilizationMax  float64 `json:"utilization_max"`
}

// MemoryUsage is the host's memory.
type MemoryUsage struct {
	TotalBytes   uint64 `json:"total_bytes"`
	UsedMaxBytes uint64 `json:"used_max_bytes"`
}

// ProcessUsage is the benched process: peak resident memory and CPU
// utilization (0 to 1 of the CPUs it may use).
type ProcessUsage struct {
	PeakRSSBytes       uint64  `json:"peak_rss_bytes"`
	CPUUtilizationMean float64 `json:"cpu_utilization_mean"`
	CPUUtilizationMax  float64 `json:"cpu_utilization_max"`
}

// GPUUsage is one GPU over the phase.
type GPUUsage struct {
	ID                 string  `json:"id"`
	Name               string  `json:"name"`
	Model              string  `json:"model,omitempty"`
	UtilizationMean    float64 `json:"utilization_mean"`
	UtilizationMax     float64 `json:"utilization_max"`
	PowerMeanW         float64 `json:"power_mean_w,omitempty"`
	PowerMaxW          float64 `json:"power_max_w,omitempty"`
	MemoryUsedMaxBytes float64 `json:"memory_used_max_bytes,omitempty"`
}

// EnergyUse is one energy counter over the measured phase.
type EnergyUse struct {
	Source string `json:"source"` // "rapl" or "nvml"
	ID     string `json:"id"`     // hw.id
	Name   string `json:"name"`   // hw.name
	Type   string `json:"type"`   // hw.type: cpu, memory, gpu, enclosure
	// Parent is set for a component contained in another one (RAPL dram
	// within its package): totals must not count it twice.
	Parent string `json:"parent,omitempty"`

	Joules             float64 `json:"joules"`
	JoulesPerInference float64 `json:"joules_per_inference"`
	PowerMeanW         float64 `json:"power_mean_w"`
	PowerMaxW          float64 `json:"power_max_w"`
	// IdlePowerW is the mean power over a short idle window measured just
	// before the phase, the baseline for dynamic energy.
	IdlePowerW *float64 `json:"idle_power_w,omitempty"`
}

// TemperatureMax is the highest reading of one sensor.
type TemperatureMax struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	MaxCelsius float64 `json:"max_celsius"`
}

// HardwareSample is one sampling tick. Absent readings are omitted.
type HardwareSample struct {
	TS                float64            `json:"t_s"` // since the phase started
	CPUUtilization    *float64           `json:"cpu_utilization,omitempty"`
	ProcessCPU        *float64           `json:"process_cpu_utilization,omitempty"`
	RSSBytes          uint64             `json:"rss_bytes,omitempty"`
	GPUUtilization    map[string]float64 `json:"gpu_utilization,omitempty"` // by hw.id
	PowerW            map[string]float64 `json:"power_w,omitempty"`         // by energy counter hw.id
	MemoryUtilization *float64           `json:"memory_utilization,omitempty"`
}
