package memory

// Fields of /proc/meminfo the receiver reads, in bytes.
const (
	memTotal = iota
	memFree
	memAvailable
	memBuffers
	memCached
	memSReclaimable
	memSwapTotal
	memSwapFree
	memUsed // set by sources that compute "used" themselves (gopsutil)
	numMem
)

// Counters of /proc/vmstat the receiver reads.
const (
	vmPgfault = iota
	vmPgmajfault
	vmPswpin
	vmPswpout
	vmPgpgin
	vmPgpgout
	numVM
)

// sample is one reading of the machine's memory. A source fills it; the
// receiver turns it into observations.
type sample struct {
	mem    [numMem]uint64
	memHas uint16 // bit i: mem[i] was read
	vm     [numVM]uint64
	vmHas  uint8 // bit i: vm[i] was read
}

func (s *sample) hasMem(i int) bool { return s.memHas&(1<<i) != 0 }
func (s *sample) hasVM(i int) bool  { return s.vmHas&(1<<i) != 0 }

func (s *sample) setMem(i int, v uint64) { s.mem[i], s.memHas = v, s.memHas|1<<i }
func (s *sample) setVM(i int, v uint64)  { s.vm[i], s.vmHas = v, s.vmHas|1<<i }

// usage is system.memory.usage by state, following the hostmetrics
// receiver (through gopsutil) and free(1) before procps-ng 4: "cached"
// counts the reclaimable slab with the page cache, and "used" is what is
// left, so used + free + buffers + cached = total.
//
// A source that computes "used" itself (gopsutil, on other systems) sets
// memUsed, and may lack buffers and cached: those states are then left out
// rather than reported as zeros.
type usage struct {
	used, free, buffers, cached uint64
	hasBuffers, hasCached       bool
	ok                          bool
}

func (s *sample) usage() usage {
	if !s.hasMem(memTotal) || !s.hasMem(memFree) {
		return usage{}
	}
	u := usage{
		free:       s.mem[memFree],
		buffers:    s.mem[memBuffers],
		cached:     s.mem[memCached] + s.mem[memSReclaimable], // SReclaimable is 0 when absent (before 2.6.19)
		hasBuffers: s.hasMem(memBuffers),
		hasCached:  s.hasMem(memCached),
		ok:         true,
	}
	switch {
	case s.hasMem(memUsed):
		u.used = s.mem[memUsed]
	case !u.hasBuffers || !u.hasCached:
		return usage{} // cannot tell what is used
	default:
		if rest := u.free + u.buffers + u.cached; rest < s.mem[memTotal] {
			u.used = s.mem[memTotal] - rest
		}
	}
	return u
}

// want says which files the receiver needs.
type want struct{ vmstat bool }

// Reading numbers for procfs.Failures: each failure is reported once.
const (
	failMeminfo = iota
	failMeminfoFormat
	failAvailable
	failVmstat
	failVmstatFormat
)
