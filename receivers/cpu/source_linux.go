//go:build linux

package cpu

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// procSource reads /proc/stat, /proc/loadavg and the CPU frequency (cpufreq
// under /sys, else "cpu MHz" in /proc/cpuinfo), keeping the files open.
type procSource struct {
	ticks   float64 // USER_HZ
	stat    *procfs.File
	loadavg *procfs.File // nil when absent
	loadErr error        // why loadavg is absent

	// Frequency: cpufreq files by logical number, or cpuinfo.
	freqDir string         // root/sys/devices/system/cpu
	cpufreq []*procfs.File // nil entries: not opened (yet)
	freqTry []bool         // an open of cpufreq[n] was tried
	cpuinfo *procfs.File
	freqErr error // why no frequency source exists
	fields  [][]byte
}

func newSource(c config, w want) (source, error) {
	s := &procSource{ticks: float64(procfs.ClockTicks(c.Root)), fields: make([][]byte, 0, 16)}
	var err error
	if s.stat, err = procfs.OpenFile(filepath.Join(c.Root, "proc", "stat"), nil); err != nil {
		return nil, receivers.Unsupported("cpu", "cannot read the kernel's CPU statistics", err)
	}
	if s.loadavg, err = procfs.OpenFile(filepath.Join(c.Root, "proc", "loadavg"), nil); err != nil {
		s.loadErr = err
	}
	if w.freq {
		s.freqDir = filepath.Join(c.Root, "sys", "devices", "system", "cpu")
		if f, err := procfs.OpenFile(s.cpufreqPath(0), nil); err == nil {
			s.cpufreq, s.freqTry = []*procfs.File{f}, []bool{true}
		} else if f, err2 := procfs.OpenFile(filepath.Join(c.Root, "proc", "cpuinfo"), nil); err2 == nil {
			s.cpuinfo = f
		} else {
			s.freqErr = fmt.Errorf("system.cpu.frequency: no cpufreq (%w) and no /proc/cpuinfo (%w)", err, err2)
		}
	}
	return s, nil
}

func (s *procSource) hz() float64 { return s.ticks }

func (s *procSource) cpufreqPath(n int) string {
	return filepath.Join(s.freqDir, "cpu"+strconv.Itoa(n), "cpufreq", "scaling_cur_freq")
}

func (s *procSource) close() error {
	var errs []error
	for _, f := range append([]*procfs.File{s.stat, s.loadavg, s.cpuinfo}, s.cpufreq...) {
		if f != nil {
			errs = append(errs, f.Close())
		}
	}
	return errors.Join(errs...)
}

func (s *procSource) read(_ context.Context, smp *sample, w want, fail *procfs.Failures) bool {
	smp.reset()
	ok := s.readStat(smp, w, fail)
	if w.load {
		s.readLoad(smp, fail)
	}
	if w.freq {
		s.readFreq(smp, fail)
	}
	return ok
}

// readStat parses /proc/stat: the "cpu" and "cpuN" lines (user nice system
// idle iowait irq softirq steal guest guest_nice, in USER_HZ ticks), "intr"
// (its first number is the total) and "ctxt".
func (s *procSource) readStat(smp *sample, w want, fail *procfs.Failures) bool {
	b, err := s.stat.Read()
	if err != nil {
		fail.Fail(failStat, err)
		return false
	}
	fail.OK(failStat)
	var badLine []byte
	var seenCtxt, seenIntr bool
	for len(b) > 0 {
		var line []byte
		line, b = procfs.NextLine(b)
		switch {
		case bytes.HasPrefix(line, []byte("cpu")):
			if !s.parseCPU(smp, line, w.perCPU) && badLine == nil {
				badLine = line
			}
		case bytes.HasPrefix(line, []byte("ctxt ")):
			seenCtxt = true
			if v, ok := procfs.ParseUint(bytes.TrimSpace(line[5:])); ok {
				smp.ctxt, smp.ctxtOK = v, true
			}
		case bytes.HasPrefix(line, []byte("intr ")):
			seenIntr = true
			rest := bytes.TrimLeft(line[5:], " ")
			if i := bytes.IndexByte(rest, ' '); i >= 0 {
				rest = rest[:i]
			}
			if v, ok := procfs.ParseUint(rest); ok {
				smp.intr, smp.intrOK = v, true
			}
		}
	}
	if badLine != nil || smp.online == 0 {
		if fail.First(failStatFormat) {
			if badLine != nil {
				fail.Report(fmt.Errorf("read %q: malformed line %q: want a name and at least 4 numbers", s.stat.Path(), procfs.Truncate(badLine)))
			} else {
				fail.Report(fmt.Errorf("read %q: no per-CPU \"cpuN\" lines", s.stat.Path()))
			}
		}
	} else {
		fail.OK(failStatFormat)
	}
	if w.ctxt {
		s.check(fail, failCtxt, smp.ctxtOK, seenCtxt, "ctxt")
	}
	if w.intr {
		s.check(fail, failIntr, smp.intrOK, seenIntr, "intr")
	}
	return smp.total.ok || smp.online > 0
}

func (s *procSource) check(fail *procfs.Failures, id int, ok, seen bool, what string) {
	switch {
	case ok:
		fail.OK(id)
	case fail.First(id):
		if seen {
			fail.Report(fmt.Errorf("read %q: the %q line holds no number", s.stat.Path(), what))
		} else {
			fail.Report(fmt.Errorf("read %q: no %q line", s.stat.Path(), what))
		}
	}
}

// parseCPU parses one "cpu" or "cpuN" line into smp and reports whether it
// was well formed. Without perCPU a "cpuN" line is only counted.
func (s *procSource) parseCPU(smp *sample, line []byte, perCPU bool) bool {
	if !perCPU && len(line) > 3 && line[3] != ' ' {
		smp.online++
		return true
	}
	s.fields = procfs.Fields(line, s.fields)
	f := s.fields
	if len(f) == 0 {
		return false
	}
	var c *cpuTicks
	if len(f[0]) == 3 {
		c = &smp.total
	} else {
		n, ok := procfs.ParseUint(f[0][3:])
		if !ok || n > 1<<16 {
			return false
		}
		smp.online++
		c = smp.cpu(int(n))
	}
	if len(f) < 5 {
		return false
	}
	var v [8]uint64
	cols := min(len(f)-1, 8)
	for i := range cols {
		x, ok := procfs.ParseUint(f[i+1])
		if !ok {
			return false
		}
		v[i] = x
	}
	c.t = [numModes]uint64{v[0], v[1], v[2], v[3], v[4], v[5] + v[6], v[7]}
	c.modes = 1<<modeUser | 1<<modeNice | 1<<modeSystem | 1<<modeIdle
	if cols > 4 {
		c.modes |= 1 << modeIOWait
	}
	if cols > 5 {
		c.modes |= 1 << modeInterrupt // irq, and softirq when present
	}
	if cols > 7 {
		c.modes |= 1 << modeSteal
	}
	c.ok = true
	return true
}

// readLoad parses /proc/loadavg: "0.32 0.45 0.50 1/123 4567".
func (s *procSource) readLoad(smp *sample, fail *procfs.Failures) {
	if s.loadavg == nil {
		fail.Fail(failLoad, s.loadErr)
		return
	}
	b, err := s.loadavg.Read()
	if err != nil {
		fail.Fail(failLoad, err)
		return
	}
	s.fields = procfs.Fields(bytes.TrimSpace(b), s.fields)
	if len(s.fields) >= 3 {
		smp.loadOK = true
		for i := range 3 {
			v, ok := procfs.ParseDecimal(s.fields[i])
			if !ok {
				smp.loadOK = false
				break
			}
			smp.load[i] = v
		}
	}
	if smp.loadOK {
		fail.OK(failLoad)
	} else if fail.First(failLoad) {
		fail.Report(fmt.Errorf("read %q: malformed content %q: want three load averages", s.loadavg.Path(), procfs.Truncate(b)))
	}
}

// readFreq reads scaling_cur_freq (kHz) of every CPU seen in /proc/stat,
// or the "cpu MHz" lines of /proc/cpuinfo.
func (s *procSource) readFreq(smp *sample, fail *procfs.Failures) {
	switch {
	case s.freqErr != nil:
		fail.Fail(failFreq, s.freqErr)
	case s.cpuinfo != nil:
		s.readCPUInfo(smp, fail)
	default:
		s.readCPUFreq(smp, fail)
	}
}

func (s *procSource) readCPUFreq(smp *sample, fail *procfs.Failures) {
	var firstErr error
	var badFile *procfs.File
	var badContent []byte
	for n := range smp.cpus {
		if !smp.cpus[n].ok {
			continue
		}
		for len(s.cpufreq) <= n {
			s.cpufreq = append(s.cpufreq, nil)
			s.freqTry = append(s.freqTry, false)
		}
		if s.cpufreq[n] == nil {
			if s.freqTry[n] {
				continue // no cpufreq for this CPU: reported already
			}
			s.freqTry[n] = true
			f, err := procfs.OpenFile(s.cpufreqPath(n), nil)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			s.cpufreq[n] = f
		}
		b, err := s.cpufreq[n].Read()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		khz, ok := procfs.ParseUint(bytes.TrimSpace(b))
		if !ok || khz == 0 {
			if badFile == nil {
				badFile, badContent = s.cpufreq[n], b
			}
			continue
		}
		smp.setFreq(n, int64(khz)*1000)
	}
	if firstErr != nil {
		fail.Fail(failFreq, firstErr)
	} else {
		fail.OK(failFreq)
	}
	if badFile != nil {
		if fail.First(failFreqFormat) {
			fail.Report(fmt.Errorf("read %q: %q is not a frequency in kHz", badFile.Path(), procfs.Truncate(badContent)))
		}
	} else {
		fail.OK(failFreqFormat)
	}
}

// readCPUInfo takes the "cpu MHz" of each "processor" block.
func (s *procSource) readCPUInfo(smp *sample, fail *procfs.Failures) {
	b, err := s.cpuinfo.Read()
	if err != nil {
		fail.Fail(failFreq, err)
		return
	}
	fail.OK(failFreq)
	proc, found := -1, 0
	var bad []byte
	for kv := range procfs.Pairs(b) {
		line, k, v := kv.Line, kv.Key, kv.Value
		switch string(k) {
		case "processor":
			n, ok := procfs.ParseUint(v)
			proc = -1
			if ok && n <= 1<<16 {
				proc = int(n)
			}
		case "cpu MHz":
			mhz, ok := procfs.ParseDecimal(v)
			if !ok || proc < 0 {
				if bad == nil {
					bad = line
				}
				continue
			}
			smp.setFreq(proc, int64(mhz*1e6+0.5))
			found++
		}
	}
	switch {
	case bad != nil:
		if fail.First(failFreqFormat) {
			fail.Report(fmt.Errorf("read %q: malformed line %q", s.cpuinfo.Path(), procfs.Truncate(bad)))
		}
	case found == 0:
		if fail.First(failFreqFormat) {
			fail.Report(fmt.Errorf("read %q: no \"cpu MHz\" lines (this CPU does not report its frequency there)", s.cpuinfo.Path()))
		}
	default:
		fail.OK(failFreqFormat)
	}
}
