// Package perf counts what a process does on the CPU with Linux perf
// events (perf_event_open(2)), the same counters `perf stat` reads: the
// CPU's hardware counters (instructions, cycles, last-level cache
// references and misses, branch misses) and the kernel's software events
// (context switches, page faults, CPU migrations). From the hardware
// counters it derives instructions per cycle and the cache hit ratio over
// each collection interval.
//
// # Metrics
//
// [Metrics] lists what the receiver emits, generated from the semconv
// registry: a counter per event and the two ratios. Counters are
// cumulative from New. ortel.perf.ipc is the instructions divided by the
// cycles counted between two collections, and ortel.perf.cache.hit_ratio
// is 1 − misses / references over the same interval; both are reported
// from the second collection on, and not for an interval in which the
// process ran no cycles (or made no cache references).
//
// # Two parts: hardware counters and software events
//
// The hardware counters need the CPU's performance monitoring unit (PMU),
// which most virtual machines do not expose; the software events are
// counted by the kernel and work wherever perf events do. New probes each
// part on its own, and Receiver.Parts says how each fared, for `ortel
// doctor` to print:
//
//	perf (hardware counters): not supported on this machine: this CPU exposes no hardware performance counters (no PMU; usual in virtual machines): perf_event_open: no such file or directory
//	perf (software events): ok
//
// New fails (with an error matching receivers.ErrUnsupported) only when
// neither part can count anything.
//
// # Permissions
//
// With kernel.perf_event_paranoid at 2, the usual default, a process
// without CAP_PERFMON may count its own user space only: the receiver then
// excludes the kernel (Part.UserOnly), and context switches and CPU
// migrations, which only happen inside the kernel and would always read
// zero, are listed in Part.Missing with the reason. At 3 and above (some
// distributions) or under a seccomp profile that blocks perf_event_open
// (Docker's default), nothing can be counted and the reason says which
// and what to do.
//
// # Threads, inheritance and multiplexing
//
// Perf events count threads, not processes. The receiver opens one event
// per thread present at construction (from /proc/PID/task) with inherit
// set, so the threads those threads start later — ONNX Runtime's thread
// pool, new Go runtime threads — are counted into their parent's event. A
// thread started in the instant between listing and opening is missed.
// That costs one file descriptor per thread and event.
//
// Each event is its own file descriptor rather than a group: before Linux
// 6.x a group cannot be read when inherit is set. The events are read with
// PERF_FORMAT_TOTAL_TIME_ENABLED and PERF_FORMAT_TOTAL_TIME_RUNNING: when
// more hardware events are asked for than the PMU has counters, the kernel
// multiplexes them, and each count is scaled by the time enabled over the
// time running, as perf stat does. Scaled counts are estimates; the
// receiver never lets a counter go back.
package perf
