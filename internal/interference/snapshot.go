package interference

import (
	"maps"
	"time"
)

// Source names, as the report lists them.
const (
	srcStat     = "proc/stat"
	srcTasks    = "process threads"
	srcProcStat = "process stat"
	srcPSICPU   = "pressure cpu"
	srcPSIMem   = "pressure memory"
	srcPSIIO    = "pressure io"
	srcThrottle = "thermal throttle"
	srcLoadavg  = "loadavg"
)

var psiSources = [...]struct{ source, resource, kind string }{
	{srcPSICPU, "cpu", KindPSICPU},
	{srcPSIMem, "memory", KindPSIMemory},
	{srcPSIIO, "io", KindPSIIO},
}

// snapshot is one read of every source; a source that failed is absent.
type snapshot struct {
	t        time.Time
	cpus     map[int]cpuTimes
	running  int // procs_running; -1 unknown
	tasks    map[int]task
	majflt   uint64
	hasProc  bool
	psi      map[string]uint64 // resource -> some total, µs
	throttle uint64
	hasThrot bool
	errs     map[string]error // source -> why it is missing
}

// read reads every source once.
func read(root string, pid int, also []int, cpus map[int]bool, now time.Time) snapshot {
	s := snapshot{t: now, running: -1, psi: map[string]uint64{}, errs: map[string]error{}}
	var err error
	if s.cpus, s.running, err = readStat(root); err != nil {
		s.errs[srcStat] = err
	}
	if s.tasks, err = readTasks(root, pid); err != nil {
		s.errs[srcTasks] = err
	}
	for _, p := range also {
		if ts, err := readTasks(root, p); err == nil && s.tasks != nil {
			maps.Copy(s.tasks, ts) // thread ids are unique across processes
		}
	}
	if _, _, mf, _, err := readProcStat(procPath(root, pid, "stat")); err == nil {
		s.majflt, s.hasProc = mf, true
	} else {
		s.errs[srcProcStat] = err
	}
	for _, p := range psiSources {
		if v, err := readPressure(root, p.resource); err == nil {
			s.psi[p.resource] = v
		} else {
			s.errs[p.source] = err
		}
	}
	if v, found, err := readThrottle(root, cpus); err != nil {
		s.errs[srcThrottle] = err
	} else if found {
		s.throttle, s.hasThrot = v, true
	} else {
		s.errs[srcThrottle] = errNoThrottle
	}
	return s
}
