// Package process is ortel's process receiver: it reports the CPU time and
// utilization, memory, threads, context switches, page faults, open file
// descriptors and disk I/O of a set of processes (by default this one) as
// OpenTelemetry asynchronous instruments, named by the semconv registry.
//
// New opens the processes and registers one callback on the MeterProvider;
// Shutdown unregisters it and closes what it holds. Snapshot reads the same
// processes directly, for tools that sample them themselves (ortel bench
// takes its CPU use and peak RSS from it).
//
//	r, err := process.New(process.WithMeterProvider(mp), process.WithPIDs(pid))
//
// # A changing set of processes
//
// The set may change while the receiver is registered: Watch adds
// processes (their pod attributes are read as they join), Unwatch removes
// them, and the next collection follows. WithoutSelf starts the set empty
// instead of with this process. ortel agent --discover rescans /proc for
// processes that load ONNX Runtime and keeps the set up to date this way.
// A process added by Watch that exits is dropped quietly (whoever added it
// is expected to notice); one given to New is reported once, as below.
// Watch, Unwatch, PIDs, Snapshot and the collection callback are safe to
// call from any goroutine at once.
//
//	r, _ := process.New(process.WithMeterProvider(mp), process.WithoutSelf())
//	r.Watch(4242) // from now on
//	r.Unwatch(4242)
//
// # Metrics
//
// [Metrics] lists what the receiver emits, generated from the semconv
// registry, with the process and pod attributes every point carries (the
// pod's are read once per process by package receivers/podattr). A metric
// that is off is not read: with disk I/O and file descriptors off,
// /proc/PID/io and /proc/PID/fd are not even opened.
//
// # Where the readings come from (Linux)
//
//   - /proc/PID/stat (fields after the last ')', since the name may hold
//     spaces and parentheses): process.cpu.time{user} = utime / USER_HZ,
//     {system} = stime / USER_HZ (USER_HZ from AT_CLKTCK, 100 in practice);
//     process.paging.faults{minor} = minflt, {major} = majflt (the
//     process's own, not its children's); process.thread.count =
//     num_threads; process.memory.usage = rss × page size (the "resident"
//     of /proc/PID/statm; reading it from stat saves a file);
//     process.memory.virtual = vsize (statm's "size" in bytes).
//   - /proc/PID/status: process.context_switches{voluntary} =
//     voluntary_ctxt_switches, {involuntary} = nonvoluntary_ctxt_switches;
//     Cpus_allowed_list gives the CPUs the process may run on. The kernel
//     gives the context switches of the process's main thread only there
//     (so do gopsutil and the Collector's hostmetrics receiver).
//   - process.cpu.utilization{mode} = Δ process.cpu.time{mode} / (Δ wall
//     time × CPUs the process may run on), upstream's definition: 1 is
//     every allowed CPU busy for the whole interval. The first collection
//     has no interval and reports none. Without Cpus_allowed_list the CPU
//     count is runtime.NumCPU.
//   - /proc/PID/io: process.disk.io{read} = read_bytes, {write} =
//     write_bytes (bytes the process made the storage layer fetch or send;
//     page-cache hits are not counted).
//   - /proc/PID/fd: process.unix.file_descriptor.count = its entries,
//     counted with getdents(2) (the receiver's own open directory is one of
//     them when it watches itself).
//
// This process, on the real /proc (root "/"), is read faster and more
// completely: getrusage(2) gives its CPU times (in microseconds, not
// ticks), page faults, peak RSS and context switches summed over all its
// threads, and sched_getaffinity(2) its CPUs, in place of
// /proc/self/status; /proc/self/stat is still read for memory and threads.
//
// The files are opened once and re-read from offset zero into reused
// buffers, so a collection makes one system call per file and allocates
// nothing. Every path is under the root of WithRoot or the ORTEL_HOST_ROOT
// environment variable (default "/"); the default process is the one that
// root's proc/self names.
//
// # Failures
//
// A process that exits is reported once ("pid N exited"); its points
// disappear and the other processes are still read. A file that cannot be
// read (/proc/PID/io of another user's process gives EACCES) or holds
// something unexpected leaves out the readings it carries and is reported
// once; the process's other readings go on. The callback returns the
// failures joined, each when it starts and again only after recovering.
//
// # Other systems
//
// Elsewhere the receiver reads processes through gopsutil
// (github.com/shirou/gopsutil/v4), with the readings that system offers;
// a reading it lacks is reported once.
package process
