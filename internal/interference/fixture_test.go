package interference

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixturePID is the measured process of the fixture trees.
const fixturePID = 4242

// host is a fake /proc tree whose counters tests advance between samples.
type host struct {
	t    *testing.T
	root string
	// cpus[c] = user, idle, steal ticks of CPU c.
	cpus     [][3]uint64
	running  int
	own      uint64 // the bench thread's utime
	ownCPU   int
	nvcsw    uint64
	majflt   uint64
	psi      map[string]uint64 // nil: no /proc/pressure
	procs    map[int]fakeProc
	affinity string
}

type fakeProc struct {
	comm      string
	ticks     uint64
	processor int
}

func newHost(t *testing.T, ncpu int, affinity string) *host {
	h := &host{t: t, root: t.TempDir(), cpus: make([][3]uint64, ncpu), running: 1, affinity: affinity,
		psi: map[string]uint64{"cpu": 0, "memory": 0, "io": 0}, procs: map[int]fakeProc{}}
	h.write()
	return h
}

func (h *host) file(rel, content string) {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func statLine(pid int, comm string, ticks, majflt uint64, processor int) string {
	// Fields 3..39 of proc(5): state, then zeros except majflt (12),
	// utime (14) and processor (39).
	f := make([]string, 37)
	for i := range f {
		f[i] = "0"
	}
	f[0] = "R"
	f[fieldMajflt-3] = fmt.Sprint(majflt)
	f[fieldUtime-3] = fmt.Sprint(ticks)
	f[fieldProcessor-3] = fmt.Sprint(processor)
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(f, " "))
}

// write writes the tree from the counters.
func (h *host) write() {
	var b strings.Builder
	b.WriteString("cpu  0 0 0 0 0 0 0 0 0 0\n")
	for c, v := range h.cpus {
		fmt.Fprintf(&b, "cpu%d %d 0 0 %d 0 0 0 %d 0 0\n", c, v[0], v[1], v[2])
	}
	fmt.Fprintf(&b, "procs_running %d\nprocs_blocked 0\n", h.running)
	h.file("proc/stat", b.String())
	h.file("proc/loadavg", "0.50 0.40 0.30 1/100 4242\n")
	pid := fmt.Sprint(fixturePID)
	h.file("proc/"+pid+"/status", "Name:\tortel\nCpus_allowed_list:\t"+h.affinity+"\n")
	h.file("proc/"+pid+"/stat", statLine(fixturePID, "ortel", h.own, h.majflt, h.ownCPU))
	h.file("proc/"+pid+"/task/"+pid+"/stat", statLine(fixturePID, "ortel", h.own, 0, h.ownCPU))
	h.file("proc/"+pid+"/task/"+pid+"/status", fmt.Sprintf("Name:\tortel\nvoluntary_ctxt_switches:\t10\nnonvoluntary_ctxt_switches:\t%d\n", h.nvcsw))
	for res, total := range h.psi {
		h.file("proc/pressure/"+res, fmt.Sprintf("some avg10=0.00 avg60=0.00 avg300=0.00 total=%d\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", total))
	}
	for p, f := range h.procs {
		h.file(fmt.Sprintf("proc/%d/stat", p), statLine(p, f.comm, f.ticks, 0, f.processor))
	}
}

// step advances every CPU by 20 ticks (a 200 ms sample): the bench uses
// own ticks on its CPU, others' busy ticks and steal are added on cpu.
func (h *host) step(cpu int, own, others, steal uint64) {
	for c := range h.cpus {
		busy, st := uint64(0), uint64(0)
		if c == cpu {
			busy, st = own+others, steal
		}
		h.cpus[c][0] += busy
		h.cpus[c][2] += st
		h.cpus[c][1] += 20 - busy - st
	}
	h.own += own
	h.write()
}

// monitor opens a Monitor on the fixture at t0 without a background loop.
func (h *host) monitor(cpus []int) (*Monitor, time.Time) {
	h.t.Helper()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, err := newMonitor(Config{HostRoot: h.root, PID: fixturePID, CPUs: cpus, Interval: 200 * time.Millisecond}, t0)
	if err != nil {
		h.t.Fatal(err)
	}
	return m, t0
}

// sampleAt is the time of sample i after t0.
func sampleAt(t0 time.Time, i int) time.Time {
	return t0.Add(time.Duration(i) * 200 * time.Millisecond)
}
