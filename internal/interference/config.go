package interference

import (
	"os"
	"time"
)

// DefaultInterval is how often a Monitor samples: 200 ms is 20 clock
// ticks of /proc/stat per CPU (USER_HZ 100), fine enough for a 20%
// threshold to mean 4 ticks, and short enough that a disturbance of a
// second spans several samples.
const DefaultInterval = 200 * time.Millisecond

// Config says what a Monitor watches.
type Config struct {
	// HostRoot is the directory holding proc/ and sys/ (default "/");
	// tests point it at a fixture tree.
	HostRoot string
	// Interval between samples (default DefaultInterval).
	Interval time.Duration
	// CPUs are the bench's cores, judged for steal and co-runners; nil
	// means the CPUs the process may run on (its affinity mask, all CPUs
	// when it is not pinned).
	CPUs []int
	// PID is the measured process (default this one).
	PID int
	// Also are further processes measured with PID (the child processes
	// of an A/B comparison): their threads count as the bench's own, not
	// as co-runners.
	Also []int
}

func (c *Config) defaults() {
	if c.HostRoot == "" {
		c.HostRoot = "/"
	}
	if c.Interval <= 0 {
		c.Interval = DefaultInterval
	}
	if c.PID <= 0 {
		c.PID = os.Getpid()
	}
}
