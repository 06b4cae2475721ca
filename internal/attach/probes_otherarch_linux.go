//go:build linux && !386 && !amd64 && !arm64

package attach

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
)

// loadBpf stands in for the loader bpf2go generates for amd64 and arm64:
// the probes read the arguments of ONNX Runtime's functions from struct
// pt_regs, whose layout differs per architecture, and are compiled for
// those two only.
func loadBpf() (*ebpf.CollectionSpec, error) {
	return nil, fmt.Errorf("attach's eBPF probes are compiled for amd64 and arm64, not %s", runtime.GOARCH)
}
