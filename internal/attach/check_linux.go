//go:build linux

package attach

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"
)

// Status says whether attach can work on this machine, and why not.
type Status struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"` // why not, when not available
	Kernel    string `json:"kernel"`
	// Privileged: root, or CAP_BPF with CAP_PERFMON (or CAP_SYS_ADMIN).
	Privileged bool `json:"privileged"`
	// Uprobes: the kernel has the uprobe perf event type (or tracefs
	// uprobe_events).
	Uprobes bool `json:"uprobes"`
	// BTF: the kernel publishes its type information. attach's probes do
	// not need it (they use no CO-RE relocations); it is reported because
	// other eBPF tools do.
	BTF bool `json:"btf"`
}

// Linux capability numbers (linux/capability.h).
const (
	capSysAdmin = 21
	capPerfmon  = 38
	capBPF      = 39
)

// Check says whether eBPF uprobes can be used here: enough privilege, a
// kernel with uprobes, and the program and map types the probes use.
func Check() Status {
	var u unix.Utsname
	kernel := ""
	if unix.Uname(&u) == nil {
		kernel = unix.ByteSliceToString(u.Release[:])
	}
	return evaluate(kernel, os.Geteuid(), effectiveCaps(), exists, probeKernel)
}

// evaluate decides from what was found: the kernel release, the
// effective user and capabilities, which files exist, and whether the
// kernel loads the program and map types the probes use.
func evaluate(kernel string, euid int, caps uint64, have func(string) bool, probe func() error) Status {
	st := Status{Kernel: kernel}
	st.Privileged = euid == 0 || caps&(1<<capSysAdmin) != 0 ||
		(caps&(1<<capBPF) != 0 && caps&(1<<capPerfmon) != 0)
	st.Uprobes = have("/sys/bus/event_source/devices/uprobe/type") ||
		have("/sys/kernel/tracing/uprobe_events") || have("/sys/kernel/debug/tracing/uprobe_events")
	st.BTF = have("/sys/kernel/btf/vmlinux")
	switch {
	case !st.Privileged:
		st.Reason = "needs root, or the CAP_BPF and CAP_PERFMON capabilities (for example: sudo setcap cap_bpf,cap_perfmon+ep $(which ortel))"
	case !st.Uprobes:
		st.Reason = fmt.Sprintf("kernel %s has no uprobes (CONFIG_UPROBE_EVENTS)", kernel)
	default:
		if err := probe(); err != nil {
			st.Reason = fmt.Sprintf("kernel %s: %v", kernel, err)
		}
	}
	st.Available = st.Reason == ""
	return st
}

// probeKernel checks the program and map types the probes use.
func probeKernel() error {
	if err := features.HaveProgramType(ebpf.Kprobe); err != nil {
		return fmt.Errorf("cannot load probe programs: %w", err)
	}
	if err := features.HaveMapType(ebpf.RingBuf); err != nil {
		return fmt.Errorf("has no eBPF ring buffer (needs Linux 5.8 or later): %w", err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// effectiveCaps reads this process's effective capability set.
func effectiveCaps() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return n
		}
	}
	return 0
}
