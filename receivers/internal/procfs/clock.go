package procfs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"
)

// DefaultClockTicks is USER_HZ, the unit of the CPU times in /proc/stat and
// /proc/PID/stat, on every mainstream Linux architecture. The kernel fixes
// it at 100 whatever its internal tick rate (CONFIG_HZ).
const DefaultClockTicks = 100

// atClkTck is the auxiliary-vector key of USER_HZ (AT_CLKTCK).
const atClkTck = 17

// ClockTicks returns USER_HZ as the kernel told this process in its
// auxiliary vector (AT_CLKTCK in root/proc/self/auxv), which is what
// sysconf(_SC_CLK_TCK) returns in C. It returns DefaultClockTicks when the
// file is absent (fixture trees), unreadable or holds no usable entry.
func ClockTicks(root string) int64 {
	b, err := os.ReadFile(filepath.Join(root, "proc", "self", "auxv"))
	if err != nil {
		return DefaultClockTicks
	}
	if hz, ok := auxvValue(b, atClkTck); ok && hz > 0 && hz <= 1e6 {
		return int64(hz)
	}
	return DefaultClockTicks
}

// auxvValue finds key in an auxiliary vector: pairs of native-endian words
// (key, value), ending at key 0.
func auxvValue(b []byte, key uint64) (uint64, bool) {
	word := int(unsafe.Sizeof(uintptr(0)))
	for len(b) >= 2*word {
		var k, v uint64
		if word == 8 {
			k, v = binary.NativeEndian.Uint64(b), binary.NativeEndian.Uint64(b[8:])
		} else {
			k, v = uint64(binary.NativeEndian.Uint32(b)), uint64(binary.NativeEndian.Uint32(b[4:]))
		}
		if k == 0 {
			break
		}
		if k == key {
			return v, true
		}
		b = b[2*word:]
	}
	return 0, false
}

// SelfPID returns the process id that root/proc/self names: this process as
// seen in the PID namespace of that /proc (a host /proc mounted into a
// container names host PIDs). It falls back to os.Getpid when root/proc/self
// is not a link to a number.
func SelfPID(root string) int {
	target, err := os.Readlink(filepath.Join(root, "proc", "self"))
	if err == nil {
		if pid, err := strconv.Atoi(filepath.Base(target)); err == nil && pid > 0 {
			return pid
		}
	}
	return os.Getpid()
}
