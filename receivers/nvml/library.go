//go:build linux && cgo

package nvml

import (
	"github.com/NVIDIA/go-nvml/pkg/dl"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// platformConfig holds the NVML library to talk to.
type platformConfig struct{ lib nvml.Interface }

// WithInterface sets the NVML library the receiver talks to, such as a
// go-nvml mock in tests. The default is nvml.New(), which loads
// libnvidia-ml.so.1 when the receiver initializes it. This option exists
// only in Linux builds with cgo, the ones that can load NVML.
func WithInterface(lib nvml.Interface) Option {
	return func(c *config) { c.platform.lib = lib }
}

// libraryName is the NVML library nvml.New() loads.
const libraryName = "libnvidia-ml.so.1"

// probeLibrary checks that the NVML library can be loaded, which takes
// about a millisecond, so that New can say at once that there is no
// driver; initializing NVML (nvmlInit), which can take seconds, happens
// later, off the caller's path.
func probeLibrary() error {
	lib := dl.New(libraryName, dl.RTLD_LAZY|dl.RTLD_GLOBAL)
	if err := lib.Open(); err != nil {
		return err
	}
	return lib.Close()
}

// symbols are the NVML functions newer than the oldest drivers that the
// receiver calls. go-nvml binds functions lazily, so calling one the
// installed driver lacks would abort the process: each is looked up once,
// and a missing one turns the reading into "not supported".
var symbols = []string{
	"nvmlDeviceGetMemoryInfo_v2",
	"nvmlDeviceGetCurrentClocksEventReasons",
	"nvmlDeviceGetSupportedClocksEventReasons",
	"nvmlDeviceGetCurrentClocksThrottleReasons",
	"nvmlDeviceGetSupportedClocksThrottleReasons",
	"nvmlDeviceGetTotalEnergyConsumption",
	"nvmlDeviceGetFieldValues",
	"nvmlDeviceGetProcessUtilization",
	"nvmlGpmQueryDeviceSupport",
	"nvmlGpmSampleAlloc",
	"nvmlGpmSampleGet",
	"nvmlGpmMetricsGet",
}

// lookupSymbols returns which of symbols the library has.
func lookupSymbols(lib nvml.Interface) map[string]bool {
	have := make(map[string]bool, len(symbols))
	ext := lib.Extensions()
	for _, s := range symbols {
		have[s] = ext == nil || ext.LookupSymbol(s) == nil
	}
	return have
}
