package process

// Parts of a process sample, as bits of sample.has.
const (
	hasTimes = 1 << iota
	hasMemory
	hasThreads
	hasFaults
	hasCtxt
	hasCPUs
	hasPeakRSS
	hasIO
	hasFDs
)

// sample is one reading of one process. A source fills it; the receiver
// turns it into observations.
type sample struct {
	has          uint16
	user, system float64 // CPU seconds
	rss, virtual uint64  // bytes
	peakRSS      uint64  // bytes (VmHWM)
	threads      int64
	minflt       uint64
	majflt       uint64
	voluntary    uint64
	involuntary  uint64
	cpus         int // CPUs the process may run on
	readBytes    uint64
	writeBytes   uint64
	fds          int64
}

func (s *sample) ok(part uint16) bool { return s.has&part == part }

// want says which parts the receiver needs, so that the files of the
// others are not read.
type want struct {
	stat   bool // memory, virtual memory, threads (CPU times and faults are always read)
	status bool // context switches, allowed CPUs, peak RSS
	io     bool
	fds    bool
}

// Reading numbers for procfs.Failures, per process: each failure is
// reported once. A process's readings are numbered base+fail*.
const (
	failStat = iota
	failStatFormat
	failStatus
	failStatusFormat
	failIO
	failIOFormat
	failFD
	numFail
)
