package e2e

import (
	"os"
	"path/filepath"
)

// ProbeHardware looks at a machine's device files under root ("/" for this
// machine) for an NVIDIA driver and readable RAPL energy counters.
func ProbeHardware(root string) Hardware {
	var h Hardware
	for _, p := range []string{"proc/driver/nvidia/version", "dev/nvidiactl"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			h.GPU = true
		}
	}
	zones, _ := filepath.Glob(filepath.Join(root, "sys/class/powercap/intel-rapl:*/energy_uj"))
	for _, z := range zones {
		if b, err := os.ReadFile(z); err == nil && len(b) > 0 {
			h.RAPL = true
			break
		}
	}
	return h
}
