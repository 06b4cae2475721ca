package rapl

import (
	"cmp"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/semconv"
)

// Zone describes one RAPL powercap zone found at construction.
type Zone struct {
	// ID is the zone's folder name under /sys/class/powercap, such as
	// "intel-rapl:0" or the subzone "intel-rapl:0:2". It is the hw.id.
	ID string
	// Name is the zone's name file ("package-0", "core", "uncore",
	// "dram", "psys"); a subzone's name is prefixed with its parent's,
	// as in "package-1/dram", so names stay unique. It is the hw.name.
	Name string
	// Type is the hw.type: "cpu", "gpu", "memory" or "enclosure" (see the
	// package documentation for the mapping).
	Type string
	// Parent is the ID of the enclosing zone, "" for a top-level zone. A
	// package zone's energy includes its subzones', so add up only the
	// zones whose Parent is "" to get a total. It is the hw.parent.
	Parent string
	// MaxJoules is the counter's range (max_energy_range_uj): the kernel
	// counter wraps to zero past it. The receiver must read the zone at
	// least once every MaxJoules / (peak power) seconds.
	MaxJoules float64
	// Err is nil when the zone is read; otherwise it matches
	// receivers.ErrUnsupported and says in plain words why it is not.
	Err error
}

// Energy is the energy one zone consumed since the receiver was created.
type Energy struct {
	ID, Name, Type, Parent string // as in Zone
	Joules                 float64
}

// zoneKind returns the hw.type of a RAPL domain name and whether the name
// is a known domain.
//
//	package-N -> cpu        the whole processor socket
//	core      -> cpu        the cores (power plane 0)
//	uncore    -> gpu        power plane 1: the integrated graphics on
//	                        client processors, which is what the kernel
//	                        exposes as "uncore"
//	dram      -> memory     the memory attached to the socket
//	psys      -> enclosure  the whole platform (SoC and more), as
//	                        measured by the platform's own sensor
func zoneKind(name string) (attribute.KeyValue, bool) {
	switch {
	case strings.HasPrefix(name, "package-"), name == "core":
		return semconv.HwTypeCPU, true
	case name == "uncore":
		return semconv.HwTypeGPU, true
	case name == "dram":
		return semconv.HwTypeMemory, true
	case name == "psys":
		return semconv.HwTypeEnclosure, true
	}
	return attribute.KeyValue{}, false
}

// zonePrefix starts the folder name of every RAPL zone read through the
// MSR interface: intel-rapl:N for a top-level zone, intel-rapl:N:M for a
// subzone. The kernel uses the same names on AMD processors (Zen and
// newer). The MMIO interface (intel-rapl-mmio:N) repeats the package
// counter of the same socket and is skipped so energy is not counted twice.
const zonePrefix = "intel-rapl:"

// zoneNumbers parses a zone folder name into its numbers: [0] for
// intel-rapl:0, [0 2] for intel-rapl:0:2. It reports false for any other
// name (the intel-rapl control folder, intel-rapl-mmio zones, ...).
func zoneNumbers(id string) ([]int, bool) {
	rest, ok := strings.CutPrefix(id, zonePrefix)
	if !ok || rest == "" {
		return nil, false
	}
	parts := strings.Split(rest, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nil, false
		}
		nums[i] = n
	}
	return nums, true
}

// parentID returns the ID of a subzone's parent, "" for a top-level zone.
func parentID(id string) string {
	if nums, ok := zoneNumbers(id); ok && len(nums) > 1 {
		return id[:strings.LastIndexByte(id, ':')]
	}
	return ""
}

// compareZones orders zone IDs numerically: intel-rapl:2 before
// intel-rapl:10, and a package before its subzones.
func compareZones(a, b string) int {
	na, _ := zoneNumbers(a)
	nb, _ := zoneNumbers(b)
	for i := 0; i < len(na) && i < len(nb); i++ {
		if c := cmp.Compare(na[i], nb[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(na), len(nb))
}

// counter turns the readings of a wrapping energy counter into a running
// total that does not wrap.
type counter struct {
	max   uint64 // the counter's range (max_energy_range_uj)
	last  uint64 // the previous raw reading
	total uint64 // energy counted since the first reading, µJ
}

// advance adds the energy counted since the previous reading. A reading
// below the previous one means the counter wrapped past max once; more
// than one wrap between two readings cannot be seen, which is why zones
// must be read at least once per max / peak power.
func (c *counter) advance(raw uint64) {
	if raw >= c.last {
		c.total += raw - c.last
	} else {
		c.total += c.max - c.last + raw
	}
	c.last = raw
}
