// Package procfs is what ortel's receivers share for reading /proc and
// /sys files without allocating once warmed up, with a few helpers around
// them, and for their options.
//
//   - A File keeps its file descriptor open and re-reads the file from
//     offset zero into a buffer it reuses: the kernel regenerates a /proc or
//     /sys file on every read at offset zero, so a collection costs one
//     pread(2) per file instead of open, read and close. A Dir counts the
//     entries of a directory (such as /proc/PID/fd) with getdents(2) into a
//     reused buffer. OpenFunc lets tests inject failures such as EACCES.
//   - ReadOnce reads a small file once, at construction.
//   - NextLine, Fields, KeyValue, ParseUint, ParseInt, ParseDecimal and
//     CountList parse straight from the bytes; ClampInt64 hands a uint64
//     counter to an Int64 instrument; Truncate shortens what a file holds
//     for an error message.
//   - Failures remembers which readings are failing, so that a receiver
//     reports each persistent failure once rather than on every collection.
//   - Config holds the options every receiver takes (MeterProvider, root,
//     metrics on and off), embedded in each receiver's config so that its
//     With... options are one line each. RootFromEnv reads
//     ORTEL_HOST_ROOT; Select turns a receiver's metrics on and off from
//     the registry defaults.
//   - ClockTicks finds USER_HZ in the auxiliary vector; SelfPID resolves
//     root/proc/self.
//   - CommonReason and Summarize say once why none of a source's parts
//     (RAPL zones, sensors, perf events) can be read, when they all fail
//     for the same reason.
//
// The package is internal to the receivers and has no telemetry of its own.
// Its subpackage procfstest holds their test helpers.
package procfs
