// Package procfs is what ortel's host receivers (receivers/cpu,
// receivers/memory, receivers/process) share: reading /proc and /sys files
// without allocating once warmed up, and a few helpers around them.
//
//   - A File keeps its file descriptor open and re-reads the file from
//     offset zero into a buffer it reuses: the kernel regenerates a /proc or
//     /sys file on every read at offset zero, so a collection costs one
//     pread(2) per file instead of open, read and close. A Dir counts the
//     entries of a directory (such as /proc/PID/fd) with getdents(2) into a
//     reused buffer. OpenFunc lets tests inject failures such as EACCES.
//   - NextLine, Fields, KeyValue, ParseUint, ParseInt, ParseDecimal and
//     CountList parse straight from the bytes.
//   - Failures remembers which readings are failing, so that a receiver
//     reports each persistent failure once rather than on every collection.
//   - RootFromEnv reads ORTEL_HOST_ROOT; ClockTicks finds USER_HZ in the
//     auxiliary vector; SelfPID resolves root/proc/self; Select turns a
//     receiver's metrics on and off from the registry defaults.
//
// The package is internal to the receivers and has no telemetry of its own.
// Its subpackage procfstest holds their test helpers.
package procfs
