package bench

import (
	"os"
	"runtime"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/ortel-dev/ortel/internal/report"
)

// hostInfo describes the machine for the report. gopsutil reads the CPU
// model and memory size portably; a missing reading is left empty.
func hostInfo() report.Host {
	h := report.Host{OS: runtime.GOOS, Arch: runtime.GOARCH, LogicalCPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	if infos, err := cpu.Info(); err == nil && len(infos) > 0 {
		h.CPUModel = infos[0].ModelName
	}
	if vm, err := mem.VirtualMemory(); err == nil {
		h.MemoryBytes = vm.Total
	}
	return h
}

// HostInfo describes this machine as a bench report does.
func HostInfo() report.Host { return hostInfo() }
