package interference

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// cpuTimes are one CPU's cumulative times from /proc/stat, in clock ticks.
type cpuTimes struct {
	busy, steal, total uint64
}

// task is one thread of the watched process.
type task struct {
	ticks     uint64 // utime + stime
	processor int    // the CPU it last ran on
	nvcsw     uint64 // involuntary context switches
	hasNvcsw  bool
	running   bool // state R when read
}

// readStat reads /proc/stat: per-CPU times and procs_running.
func readStat(root string) (map[int]cpuTimes, int, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc", "stat"))
	if err != nil {
		return nil, 0, err
	}
	cpus := map[int]cpuTimes{}
	running := -1
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		switch {
		case f[0] == "procs_running":
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, 0, fmt.Errorf("proc/stat procs_running %q: %w", f[1], err)
			}
			running = n
		case strings.HasPrefix(f[0], "cpu") && f[0] != "cpu":
			id, err := strconv.Atoi(f[0][3:])
			if err != nil || len(f) < 5 {
				return nil, 0, fmt.Errorf("proc/stat line %q: not a CPU line", sc.Text())
			}
			// user nice system idle iowait irq softirq steal guest guest_nice;
			// guest time is already in user, so it is not added again.
			var v [8]uint64
			for i := 0; i < 8 && i+1 < len(f); i++ {
				if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
					return nil, 0, fmt.Errorf("proc/stat line %q: %w", sc.Text(), err)
				}
			}
			t := cpuTimes{steal: v[7]}
			t.busy = v[0] + v[1] + v[2] + v[5] + v[6]
			t.total = t.busy + v[3] + v[4] + v[7]
			cpus[id] = t
		}
	}
	if len(cpus) == 0 {
		return nil, 0, fmt.Errorf("proc/stat has no per-CPU line")
	}
	return cpus, running, nil
}

// statFields returns the fields of a /proc/PID/stat line after the
// command name, starting with field 3 (state), and the command name.
func statFields(b []byte) ([]string, string, error) {
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return nil, "", fmt.Errorf("no command name in %q", strings.TrimSpace(s))
	}
	return strings.Fields(s[end+1:]), s[open+1 : end], nil
}

// Field numbers of proc(5)'s /proc/PID/stat, counted from 1; statFields
// starts at field 3.
const (
	fieldMajflt    = 12
	fieldUtime     = 14
	fieldStime     = 15
	fieldProcessor = 39
)

func field(f []string, n int) (uint64, error) {
	if n-3 >= len(f) {
		return 0, fmt.Errorf("stat has %d fields, want field %d", len(f)+2, n)
	}
	return strconv.ParseUint(f[n-3], 10, 64)
}

// readProcStat reads a /proc/PID/stat or task stat file: CPU ticks, last
// processor, major faults, command name.
func readProcStat(path string) (ticks uint64, processor int, majflt uint64, comm string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, "", err
	}
	f, comm, err := statFields(b)
	if err != nil {
		return 0, 0, 0, "", fmt.Errorf("%s: %w", path, err)
	}
	var u, s, p uint64
	if u, err = field(f, fieldUtime); err == nil {
		if s, err = field(f, fieldStime); err == nil {
			if majflt, err = field(f, fieldMajflt); err == nil {
				p, err = field(f, fieldProcessor)
			}
		}
	}
	if err != nil {
		return 0, 0, 0, "", fmt.Errorf("%s: %w", path, err)
	}
	return u + s, int(p), majflt, comm, nil
}

// readTasks reads every thread of pid. A thread that ends while it is
// read is skipped.
func readTasks(root string, pid int) (map[int]task, error) {
	dir := filepath.Join(root, "proc", strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[int]task, len(ents))
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ticks, proc, _, _, err := readProcStat(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		t := task{ticks: ticks, processor: proc, running: taskRunning(filepath.Join(dir, e.Name(), "stat"))}
		if v, ok := statusValue(filepath.Join(dir, e.Name(), "status"), "nonvoluntary_ctxt_switches"); ok {
			if n, err := strconv.ParseUint(v, 10, 64); err == nil {
				t.nvcsw, t.hasNvcsw = n, true
			}
		}
		out[tid] = t
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no readable thread", dir)
	}
	return out, nil
}

// taskRunning says whether a thread's stat file shows it runnable (R).
func taskRunning(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	f, _, err := statFields(b)
	return err == nil && len(f) > 0 && f[0] == "R"
}

// statusValue returns the value of key in a /proc status file.
func statusValue(path, key string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// parseCPUList parses a list such as "0-3,6".
func parseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("CPU list %q is empty", s)
	}
	return out, nil
}

// readAffinity reads the CPUs pid may run on.
func readAffinity(root string, pid int) ([]int, error) {
	path := filepath.Join(root, "proc", strconv.Itoa(pid), "status")
	v, ok := statusValue(path, "Cpus_allowed_list")
	if !ok {
		return nil, fmt.Errorf("%s: no Cpus_allowed_list", path)
	}
	return parseCPUList(v)
}

// readPressure reads the "some" total (microseconds stalled) of one PSI
// resource.
func readPressure(root, resource string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc", "pressure", resource))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "total="); ok {
				return strconv.ParseUint(v, 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("proc/pressure/%s: no \"some ... total=\" line", resource)
}

// readLoadavg reads /proc/loadavg's three load averages.
func readLoadavg(root string) ([]float64, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc", "loadavg"))
	if err != nil {
		return nil, err
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil, fmt.Errorf("proc/loadavg %q: want three load averages", strings.TrimSpace(string(b)))
	}
	out := make([]float64, 3)
	for i := range out {
		if out[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return nil, fmt.Errorf("proc/loadavg %q: %w", strings.TrimSpace(string(b)), err)
		}
	}
	return out, nil
}

// throttleGlob finds Intel's per-CPU thermal throttling event counters.
const throttleGlob = "sys/devices/system/cpu/cpu[0-9]*/thermal_throttle/*_throttle_count"

// readThrottle sums the thermal throttling event counters of cpus (nil:
// all); found is false when the machine has none.
func readThrottle(root string, cpus map[int]bool) (sum uint64, found bool, err error) {
	paths, _ := filepath.Glob(filepath.Join(root, throttleGlob))
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(filepath.Join(root, "sys/devices/system/cpu"), p)
		id, err := strconv.Atoi(strings.TrimPrefix(strings.SplitN(rel, string(filepath.Separator), 2)[0], "cpu"))
		if err != nil || (cpus != nil && !cpus[id]) {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, false, err
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", p, err)
		}
		sum, found = sum+n, true
	}
	return sum, found, nil
}

// proc is one process seen by a scan of /proc.
type proc struct {
	comm      string
	ticks     uint64
	processor int
}

// scanProcs reads every process's CPU ticks, last CPU and name; processes
// that end while read are skipped.
func scanProcs(root string) map[int]proc {
	ents, err := os.ReadDir(filepath.Join(root, "proc"))
	if err != nil {
		return nil
	}
	out := map[int]proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ticks, p, _, comm, err := readProcStat(filepath.Join(root, "proc", e.Name(), "stat"))
		if err == nil {
			out[pid] = proc{comm: comm, ticks: ticks, processor: p}
		}
	}
	return out
}
