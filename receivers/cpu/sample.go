package cpu

// CPU modes, in the order of their columns' meaning in /proc/stat. irq and
// softirq are both "interrupt"; guest and guest_nice are left out because
// the kernel already counts them in user and nice.
const (
	modeUser = iota
	modeNice
	modeSystem
	modeIdle
	modeIOWait
	modeInterrupt
	modeSteal
	numModes
)

// cpuTicks is the cumulative time of one CPU (or of all together) by mode,
// in clock ticks of the source.
type cpuTicks struct {
	t     [numModes]uint64
	modes uint8 // bit m set: mode m was read
	ok    bool  // read in this collection
}

func (c *cpuTicks) has(m int) bool { return c.modes&(1<<m) != 0 }

// sample is one reading of everything the receiver reports. A source fills
// it; the receiver turns it into observations.
type sample struct {
	total  cpuTicks
	cpus   []cpuTicks // by logical number
	online int        // logical CPUs seen; 0 when unknown

	ctxt, intr     uint64
	ctxtOK, intrOK bool

	load   [3]float64 // 1, 5 and 15 minutes
	loadOK bool

	freq []int64 // Hz by logical number; 0 when unknown
}

// reset prepares s for the next reading, keeping its slices.
func (s *sample) reset() {
	s.total = cpuTicks{}
	clear(s.cpus)
	s.cpus = s.cpus[:0]
	s.online = 0
	s.ctxtOK, s.intrOK, s.loadOK = false, false, false
	clear(s.freq)
	s.freq = s.freq[:0]
}

// cpu returns the entry of logical CPU n, growing cpus as needed.
func (s *sample) cpu(n int) *cpuTicks {
	for len(s.cpus) <= n {
		s.cpus = append(s.cpus, cpuTicks{})
	}
	return &s.cpus[n]
}

// setFreq records the frequency of logical CPU n.
func (s *sample) setFreq(n int, hz int64) {
	for len(s.freq) <= n {
		s.freq = append(s.freq, 0)
	}
	s.freq[n] = hz
}

// want says which parts of a sample the receiver needs.
type want struct {
	perCPU                 bool // parse the numbers of the "cpuN" lines, not only count them
	ctxt, intr, load, freq bool
}

// Reading numbers for procfs.Failures: each failure is reported once.
const (
	failStat = iota
	failStatFormat
	failCtxt
	failIntr
	failLoad
	failFreq
	failFreqFormat
)
