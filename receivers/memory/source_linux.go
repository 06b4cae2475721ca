//go:build linux

package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// procSource reads /proc/meminfo and /proc/vmstat, keeping them open.
type procSource struct {
	meminfo *procfs.File
	vmstat  *procfs.File // nil when absent or not wanted
	vmErr   error        // why vmstat is absent
}

func newSource(c config, w want) (source, error) {
	s := &procSource{}
	var err error
	if s.meminfo, err = procfs.OpenFile(filepath.Join(c.Root, "proc", "meminfo"), nil); err != nil {
		return nil, receivers.Unsupported("memory", "cannot read the kernel's memory statistics", err)
	}
	if w.vmstat {
		if s.vmstat, err = procfs.OpenFile(filepath.Join(c.Root, "proc", "vmstat"), nil); err != nil {
			s.vmErr = err
		}
	}
	return s, nil
}

func (s *procSource) close() error {
	return errors.Join(s.meminfo.Close(), s.vmstat.Close())
}

func (s *procSource) read(_ context.Context, smp *sample, w want, fail *procfs.Failures) {
	*smp = sample{}
	s.readMeminfo(smp, fail)
	if w.vmstat {
		s.readVmstat(smp, fail)
	}
}

// readMeminfo parses the "Key:   value kB" lines of /proc/meminfo.
func (s *procSource) readMeminfo(smp *sample, fail *procfs.Failures) {
	b, err := s.meminfo.Read()
	if err != nil {
		fail.Fail(failMeminfo, err)
		return
	}
	fail.OK(failMeminfo)
	var bad []byte
	for kv := range procfs.Pairs(b) {
		line, k, v := kv.Line, kv.Key, kv.Value
		var i int
		switch string(k) {
		case "MemTotal":
			i = memTotal
		case "MemFree":
			i = memFree
		case "MemAvailable":
			i = memAvailable
		case "Buffers":
			i = memBuffers
		case "Cached":
			i = memCached
		case "SReclaimable":
			i = memSReclaimable
		case "SwapTotal":
			i = memSwapTotal
		case "SwapFree":
			i = memSwapFree
		default:
			continue
		}
		n, ok := kibibytes(v)
		if !ok {
			if bad == nil {
				bad = line
			}
			continue
		}
		smp.setMem(i, n)
	}
	switch {
	case bad != nil:
		if fail.First(failMeminfoFormat) {
			fail.Report(fmt.Errorf("read %q: malformed line %q: want a number of kB", s.meminfo.Path(), procfs.Truncate(bad)))
		}
	case !smp.hasMem(memTotal) || !smp.hasMem(memFree) || !smp.hasMem(memBuffers) || !smp.hasMem(memCached):
		if fail.First(failMeminfoFormat) {
			fail.Report(fmt.Errorf("read %q: want MemTotal, MemFree, Buffers and Cached lines", s.meminfo.Path()))
		}
	default:
		fail.OK(failMeminfoFormat)
	}
	if smp.hasMem(memAvailable) {
		fail.OK(failAvailable)
	} else if bad == nil && fail.First(failAvailable) {
		fail.Report(fmt.Errorf("system.memory.linux.available: read %q: no MemAvailable line (kernels before 3.14 lack it)", s.meminfo.Path()))
	}
}

// kibibytes parses "24682416 kB" into bytes.
func kibibytes(v []byte) (uint64, bool) {
	num, unit := v, []byte(nil)
	if i := bytes.IndexByte(v, ' '); i >= 0 {
		num, unit = v[:i], bytes.TrimSpace(v[i+1:])
	}
	n, ok := procfs.ParseUint(num)
	if !ok || string(unit) != "kB" || n > 1<<53 {
		return 0, false
	}
	return n * 1024, true
}

// readVmstat parses the "name value" lines of /proc/vmstat.
func (s *procSource) readVmstat(smp *sample, fail *procfs.Failures) {
	if s.vmstat == nil {
		fail.Fail(failVmstat, s.vmErr)
		return
	}
	b, err := s.vmstat.Read()
	if err != nil {
		fail.Fail(failVmstat, err)
		return
	}
	fail.OK(failVmstat)
	var bad []byte
	for len(b) > 0 {
		var line []byte
		line, b = procfs.NextLine(b)
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		var i int
		switch string(line[:sp]) {
		case "pgfault":
			i = vmPgfault
		case "pgmajfault":
			i = vmPgmajfault
		case "pswpin":
			i = vmPswpin
		case "pswpout":
			i = vmPswpout
		case "pgpgin":
			i = vmPgpgin
		case "pgpgout":
			i = vmPgpgout
		default:
			continue
		}
		n, ok := procfs.ParseUint(bytes.TrimSpace(line[sp+1:]))
		if !ok {
			if bad == nil {
				bad = line
			}
			continue
		}
		smp.setVM(i, n)
	}
	switch {
	case bad != nil:
		if fail.First(failVmstatFormat) {
			fail.Report(fmt.Errorf("read %q: malformed line %q: want a name and a number", s.vmstat.Path(), procfs.Truncate(bad)))
		}
	case smp.vmHas != 1<<numVM-1:
		if fail.First(failVmstatFormat) {
			fail.Report(fmt.Errorf("read %q: want pgfault, pgmajfault, pswpin, pswpout, pgpgin and pgpgout lines", s.vmstat.Path()))
		}
	default:
		fail.OK(failVmstatFormat)
	}
}
