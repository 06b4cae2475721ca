// Package cpu is ortel's CPU receiver: it reports the host's CPU time,
// utilization, frequency, context switches, interrupts and load average as
// OpenTelemetry asynchronous instruments, named by the semconv registry.
//
// New probes the machine and registers one callback on the MeterProvider;
// Shutdown unregisters it. Snapshot reads the same statistics directly, for
// tools that sample the machine themselves (ortel bench).
//
//	r, err := cpu.New(cpu.WithMeterProvider(mp))
//	if errors.Is(err, receivers.ErrUnsupported) { /* no /proc/stat here */ }
//	defer r.Shutdown(ctx)
//
// # Metrics
//
// [Metrics] lists what the receiver emits, generated from the semconv
// registry. A metric that is off is not read at all. WithPerCPU(false)
// reports system.cpu.time and system.cpu.utilization for all CPUs
// together, without cpu.logical_number (7 series each instead of 7 per
// CPU), for machines with many CPUs.
//
// # Where the readings come from (Linux)
//
//   - system.cpu.time: the "cpuN" lines of /proc/stat, per logical CPU, in
//     USER_HZ ticks divided by USER_HZ (AT_CLKTCK from the auxiliary vector,
//     100 on every mainstream architecture). Columns map to cpu.mode as
//     user, nice, system, idle, iowait, interrupt (irq + softirq) and
//     steal. guest and guest_nice are not reported: the kernel already
//     counts them inside user and nice. A kernel that lacks a column gets no
//     point for that mode, never a zero.
//   - system.cpu.utilization: for each CPU and mode, the ticks the mode
//     gained since the previous collection divided by all the ticks the CPU
//     gained (so a CPU's modes add up to 1). The first collection has no
//     interval and reports no utilization; a CPU on which no tick passed
//     reports none either and keeps its older baseline. A counter that went
//     back (iowait can) counts as no time.
//   - system.cpu.frequency: scaling_cur_freq (kHz) under
//     /sys/devices/system/cpu/cpuN/cpufreq when cpu0 has one, else the
//     "cpu MHz" lines of /proc/cpuinfo.
//   - system.cpu.logical.count: the number of "cpuN" lines of /proc/stat
//     (online logical CPUs).
//   - ortel.system.context_switches and ortel.system.interrupts: the "ctxt"
//     line and the first number (the total) of the "intr" line of
//     /proc/stat.
//   - ortel.system.load_average: the first three fields of /proc/loadavg.
//
// The files are kept open and re-read from offset zero into reused buffers,
// so a collection makes one pread(2) per file and allocates nothing. Every
// path is under the root of WithRoot or the ORTEL_HOST_ROOT environment
// variable (default "/").
//
// # Other systems
//
// Elsewhere the receiver reads per-CPU times and load averages through
// gopsutil (github.com/shirou/gopsutil/v4), with the modes that system
// really counts. Context switches, interrupts and frequency are not
// available there: turned on, they say so once.
//
// # Failures
//
// A reading that fails (a missing or malformed file or line) is left out;
// the others are still observed. The callback returns the failures joined,
// each once: a failure is reported when it starts, not on every
// collection, and again only after the reading has recovered in between.
package cpu
