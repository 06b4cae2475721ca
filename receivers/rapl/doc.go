// Package rapl reports the energy the processor sockets, their cores,
// integrated graphics and memory, and the platform consume, read from the
// RAPL (Running Average Power Limit) counters that Linux exposes under
// /sys/class/powercap. It is ortel's CPU-side energy source: energy per
// inference is the difference of two readings divided by the runs between
// them.
//
// # Metrics
//
// [Metrics] lists what the receiver emits, generated from the semconv
// registry. One series per zone: hw.id is the zone folder (intel-rapl:0,
// or intel-rapl:0:2 for a subzone), hw.name its name ("package-0", or
// "package-0/dram" for a subzone), hw.parent the enclosing zone of a
// subzone. A package's energy includes its subzones': add up only the
// zones without a parent for a total.
//
// hw.type follows the RAPL domain:
//
//	| RAPL domain | hw.type   | what it measures                                     |
//	|-------------|-----------|------------------------------------------------------|
//	| package-N   | cpu       | the whole socket: cores, caches, uncore, graphics    |
//	| core        | cpu       | the cores (power plane 0)                            |
//	| uncore      | gpu       | power plane 1, the integrated graphics on client CPUs |
//	| dram        | memory    | the memory attached to the socket                    |
//	| psys        | enclosure | the whole platform, from the platform's own sensor   |
//
// Zones with other names are listed by Receiver.Zones as unsupported. AMD
// processors (Zen and newer) show the same intel-rapl names. The MMIO
// interface (intel-rapl-mmio:N) repeats a package counter and is skipped.
//
// # Wrap-safe energy
//
// The kernel counter energy_uj wraps to zero past max_energy_range_uj
// (about 262 kJ on current Intel processors: some 20 minutes at 200 W).
// The receiver keeps its own running total from the first reading at New,
// so hw.energy is the energy consumed since the receiver started and never
// wraps: a reading below the previous one adds the distance to the top of
// the range. Two wraps between readings cannot be told from one, so the
// receiver must be read (a collection or Snapshot) at least once every
// Zone.MaxJoules / peak power seconds — in practice, any interval under a
// few minutes is safe.
//
// hw.power is the energy consumed between two consecutive collections
// divided by the time between them: an average over the collection
// interval, reported from the second collection on.
//
// # Permissions
//
// Since Linux 5.10 (CVE-2020-8694) energy_uj is readable only by root. A
// zone that cannot be read is listed by Zones with the reason and how to
// fix it (run as root, or chmod o+r the energy_uj files); when no zone can
// be read, New returns an error matching receivers.ErrUnsupported that
// says so, and registers nothing.
package rapl
