// Package thermal reports the temperatures Linux knows: the thermal zones
// under /sys/class/thermal (ACPI, the processor package, ...) and the
// temperature inputs of the hwmon chips under /sys/class/hwmon (coretemp,
// k10temp, NVMe drives, ...), with the limits the kernel gives for them.
//
// # Metrics
//
// [Metrics] lists what the receiver emits, generated from the semconv
// registry. hw.id is "thermal_zone0" for a thermal zone and "hwmon1/temp2"
// for the second temperature input of hwmon1 (hwmon numbers follow the
// order the drivers loaded in, so they may change across boots). hw.name
// is the zone's type ("x86_pkg_temp") or the hwmon chip's name and the
// input's label ("coretemp Core 0", "nvme Composite"). The kernel's
// millidegrees are divided by 1000.
//
// Limits are read once, at construction:
//
//	| kernel                                | hw.limit_type |
//	|---------------------------------------|---------------|
//	| hwmon tempN_max                       | max           |
//	| hwmon tempN_crit                      | critical      |
//	| hwmon tempN_emergency                 | high.critical |
//	| hwmon tempN_min                       | low.degraded  |
//	| hwmon tempN_lcrit                     | low.critical  |
//	| thermal zone trip point "passive"     | throttled     |
//	| thermal zone trip point "hot"         | high.degraded |
//	| thermal zone trip point "critical"    | critical      |
//
// Active trip points (fan speed steps) are not limits and are left out.
// When a zone has several trip points of one type, the one reached first
// counts. Placeholders drivers write for "no limit" (0 for a disabled trip
// point, absolute zero or 65535 K on NVMe drives) are left out.
//
// Some sensors appear twice, because a thermal zone may also register a
// hwmon chip (acpitz) and the package zone x86_pkg_temp reads the same
// sensor as coretemp's "Package id N". Both are reported, under their own
// hw.id.
//
// Sensors are found once, at construction. One that cannot be opened, or
// holds something other than a number, is listed by Receiver.Sensors with
// the reason; a reading that fails later (a drive asleep, a Wi-Fi card
// down) is left out of that collection and its failure reported once.
// With no readable sensor at all — most virtual machines — New returns an
// error matching receivers.ErrUnsupported and registers nothing.
package thermal
