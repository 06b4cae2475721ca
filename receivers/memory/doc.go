// Package memory is ortel's memory receiver: it reports the host's memory
// usage, swap usage and paging activity as OpenTelemetry asynchronous
// instruments, named by the semconv registry.
//
// New probes the machine and registers one callback on the MeterProvider;
// Shutdown unregisters it. Snapshot reads the same statistics directly, for
// tools that sample the machine themselves (ortel bench).
//
// # Metrics
//
// [Metrics] lists what the receiver emits, generated from the semconv
// registry. With paging faults and operations off, /proc/vmstat is not
// read.
//
// # Formulas (Linux)
//
// From /proc/meminfo (kB × 1024):
//
//	limit     = MemTotal
//	free      = MemFree
//	buffers   = Buffers
//	cached    = Cached + SReclaimable
//	used      = MemTotal − free − buffers − cached   (0 if negative)
//	utilization{state} = usage{state} / MemTotal
//	linux.available    = MemAvailable
//
// This is what the OpenTelemetry Collector's hostmetrics receiver reports
// through gopsutil (which counts the reclaimable slab as cache, like free(1)),
// and the four states add up to the limit. Kernels before 3.14 have no
// MemAvailable: system.memory.linux.available is then left out, and says so
// once.
//
// Swap, from /proc/meminfo, only when swap is configured (SwapTotal > 0; with
// no swap there are no points at all, never zeros):
//
//	paging.usage{used} = SwapTotal − SwapFree
//	paging.usage{free} = SwapFree
//	paging.utilization{state} = paging.usage{state} / SwapTotal
//
// The total over all swap devices is reported, without system.device.
//
// From /proc/vmstat, like hostmetrics:
//
//	paging.faults{major}           = pgmajfault
//	paging.faults{minor}           = pgfault − pgmajfault   (pgfault counts all faults)
//	paging.operations{in, major}   = pswpin    (pages swapped in)
//	paging.operations{out, major}  = pswpout   (pages swapped out)
//	paging.operations{in, minor}   = pgpgin    (paged in from disk; the kernel counts these in KiB)
//	paging.operations{out, minor}  = pgpgout   (paged out to disk, in KiB)
//
// The files are kept open and re-read from offset zero into reused buffers,
// so a collection makes one pread(2) per file and allocates nothing. Every
// path is under the root of WithRoot or the ORTEL_HOST_ROOT environment
// variable (default "/").
//
// # Other systems
//
// Elsewhere the receiver reads memory and swap through gopsutil
// (github.com/shirou/gopsutil/v4): "used" is gopsutil's figure for that
// system, buffers and cached are reported only where the system has them,
// and system.memory.linux.available, paging faults and paging operations are
// not available.
//
// # Failures
//
// A reading that fails (a missing or malformed file or line) is left out;
// the others are still observed. The callback returns the failures joined,
// each once: when it starts, and again only after the reading has recovered
// in between.
package memory
