//go:build linux

package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// procSource watches processes through /proc/PID.
type procSource struct {
	root     string
	open     procfs.OpenFunc
	hz       float64 // USER_HZ
	pageSize uint64
}

func newSource(c config) (source, error) {
	if fi, err := os.Stat(filepath.Join(c.Root, "proc")); err != nil || !fi.IsDir() {
		if err == nil {
			err = fs.ErrNotExist
		}
		return nil, receivers.Unsupported("process", "no /proc under "+c.Root, err)
	}
	return &procSource{root: c.Root, open: c.open, hz: float64(procfs.ClockTicks(c.Root)), pageSize: uint64(os.Getpagesize())}, nil
}

func (s *procSource) self() int { return procfs.SelfPID(s.root) }

// procFiles holds one process's /proc files open.
type procFiles struct {
	src    *procSource
	pid    int
	stat   *procfs.File
	status *procfs.File
	io     *procfs.File
	fd     *procfs.Dir
	// Why a file could not be opened: reported on the first collection.
	statusErr, ioErr, fdErr error
	fields                  [][]byte

	self     bool       // this process: read through getrusage (self_linux.go)
	affinity [16]uint64 // sched_getaffinity buffer: 1024 CPUs
}

// watch opens the files of process pid. It fails when the process does not
// exist (its stat file cannot be opened).
func (s *procSource) watch(pid int, w want) (handle, error) {
	dir := filepath.Join(s.root, "proc", strconv.Itoa(pid))
	p := &procFiles{src: s, pid: pid, fields: make([][]byte, 0, 64)}
	// This process on the real /proc: getrusage(2) and
	// sched_getaffinity(2) give what status would, without the kernel
	// formatting a text file.
	p.self = filepath.Clean(s.root) == "/" && pid == os.Getpid() && s.open == nil
	var err error
	if p.stat, err = procfs.OpenFile(filepath.Join(dir, "stat"), s.open); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("process: cannot watch pid %d: no such process (%w)", pid, err)
		}
		return nil, fmt.Errorf("process: cannot watch pid %d: %w", pid, err)
	}
	if !p.self { // this process reads getrusage instead
		p.status, p.statusErr = procfs.OpenFile(filepath.Join(dir, "status"), s.open)
	}
	if w.io {
		p.io, p.ioErr = procfs.OpenFile(filepath.Join(dir, "io"), s.open)
	}
	if w.fds {
		if s.open != nil {
			p.fd, p.fdErr = procfs.OpenDir(filepath.Join(dir, "fd"), s.openDir)
		} else {
			p.fd, p.fdErr = procfs.OpenDir(filepath.Join(dir, "fd"), nil)
		}
	}
	return p, nil
}

// openDir opens a directory through the injected opener.
func (s *procSource) openDir(path string) (int, error) { return s.open(path) }

func (p *procFiles) close() error {
	return errors.Join(p.stat.Close(), p.status.Close(), p.io.Close(), p.fd.Close())
}

// gone reports whether err says the process no longer exists.
func gone(err error) bool {
	return errors.Is(err, syscall.ESRCH) || errors.Is(err, fs.ErrNotExist)
}

func (p *procFiles) read(_ context.Context, s *sample, w want, fail *procfs.Failures, base int) (exited bool) {
	*s = sample{}
	if p.self {
		p.readSelf(s, w, fail, base)
	} else {
		if p.readStat(s, fail, base) {
			return true
		}
		if w.status && p.readStatus(s, fail, base) {
			return true
		}
	}
	// The peak and the current RSS come from two reads (getrusage or
	// /proc/PID/status, and /proc/PID/stat): memory that grew between
	// them would show a current RSS above the peak. The peak is at least
	// what was resident.
	if s.ok(hasMemory|hasPeakRSS) && s.rss > s.peakRSS {
		s.peakRSS = s.rss
	}
	if w.io {
		if p.readIO(s, fail, base) {
			return true
		}
	}
	if w.fds {
		if p.fd == nil {
			fail.Fail(base+failFD, p.fdErr)
		} else if n, err := p.fd.Count(); err != nil {
			if gone(err) {
				return true
			}
			fail.Fail(base+failFD, err)
		} else {
			fail.OK(base + failFD)
			s.fds, s.has = int64(n), s.has|hasFDs
		}
	}
	return false
}

// readFile reads f, the file of reading id, marking the reading failing
// when f could not be opened (openErr says why) or read, and working when
// it was read. It reports whether b was read, and whether the process has
// exited.
func readFile(f *procfs.File, openErr error, fail *procfs.Failures, id int) (b []byte, ok, exited bool) {
	if f == nil {
		fail.Fail(id, openErr)
		return nil, false, false
	}
	b, err := f.Read()
	if err != nil {
		if gone(err) {
			return nil, false, true
		}
		fail.Fail(id, err)
		return nil, false, false
	}
	fail.OK(id)
	return b, true, false
}

// readStat parses /proc/PID/stat: "pid (comm) state ppid ...". comm may
// hold spaces and parentheses, so the fields are counted from the last
// ')'. Field numbers as in proc(5): minflt 10, majflt 12, utime 14,
// stime 15, num_threads 20, vsize 23, rss 24 (pages).
func (p *procFiles) readStat(s *sample, fail *procfs.Failures, base int) (exited bool) {
	b, ok, exited := readFile(p.stat, nil, fail, base+failStat)
	if !ok {
		return exited
	}
	end := bytes.LastIndexByte(b, ')')
	var f [][]byte
	if end >= 0 {
		p.fields = procfs.Fields(bytes.TrimSpace(b[end+1:]), p.fields)
		f = p.fields
	}
	// f[0] is field 3 (state).
	field := func(n int) (uint64, bool) {
		if n-3 >= len(f) {
			return 0, false
		}
		return procfs.ParseUint(f[n-3])
	}
	minflt, ok1 := field(10)
	majflt, ok2 := field(12)
	utime, ok3 := field(14)
	stime, ok4 := field(15)
	threads, ok5 := field(20)
	vsize, ok6 := field(23)
	rss, ok7 := field(24)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		if fail.First(base + failStatFormat) {
			fail.Report(fmt.Errorf("read %q: malformed content %q: want \"pid (name) state\" and at least 22 more numbers", p.stat.Path(), procfs.Truncate(b)))
		}
		return false
	}
	fail.OK(base + failStatFormat)
	s.user, s.system = float64(utime)/p.src.hz, float64(stime)/p.src.hz
	s.minflt, s.majflt = minflt, majflt
	s.threads = int64(min(threads, 1<<62))
	s.virtual, s.rss = vsize, rss*p.src.pageSize
	s.has |= hasTimes | hasFaults | hasThreads | hasMemory
	return false
}

// readStatus takes voluntary_ctxt_switches, nonvoluntary_ctxt_switches,
// Cpus_allowed_list and VmHWM from /proc/PID/status.
func (p *procFiles) readStatus(s *sample, fail *procfs.Failures, base int) (exited bool) {
	b, ok, exited := readFile(p.status, p.statusErr, fail, base+failStatus)
	if !ok {
		return exited
	}
	var bad []byte
	var vol, invol bool
	for kv := range procfs.Pairs(b) {
		line, k, v := kv.Line, kv.Key, kv.Value
		var good bool
		switch string(k) {
		case "voluntary_ctxt_switches":
			s.voluntary, good = procfs.ParseUint(v)
			vol = good
		case "nonvoluntary_ctxt_switches":
			s.involuntary, good = procfs.ParseUint(v)
			invol = good
		case "Cpus_allowed_list":
			s.cpus, good = procfs.CountList(v)
			if good {
				s.has |= hasCPUs
			}
		case "VmHWM":
			if i := bytes.IndexByte(v, ' '); i >= 0 {
				var kb uint64
				if kb, good = procfs.ParseUint(v[:i]); good {
					s.peakRSS, s.has = kb*1024, s.has|hasPeakRSS
				}
			}
		default:
			continue
		}
		if !good && bad == nil {
			bad = line
		}
	}
	if vol && invol {
		s.has |= hasCtxt
	}
	switch {
	case bad != nil:
		if fail.First(base + failStatusFormat) {
			fail.Report(fmt.Errorf("read %q: malformed line %q", p.status.Path(), procfs.Truncate(bad)))
		}
	case !vol || !invol:
		if fail.First(base + failStatusFormat) {
			fail.Report(fmt.Errorf("read %q: no voluntary_ctxt_switches and nonvoluntary_ctxt_switches lines", p.status.Path()))
		}
	default:
		fail.OK(base + failStatusFormat)
	}
	return false
}

// readIO takes read_bytes and write_bytes from /proc/PID/io: the bytes the
// process made the storage layer read and write.
func (p *procFiles) readIO(s *sample, fail *procfs.Failures, base int) (exited bool) {
	b, ok, exited := readFile(p.io, p.ioErr, fail, base+failIO) // EACCES: another user's process
	if !ok {
		return exited
	}
	var r, w bool
	for kv := range procfs.Pairs(b) {
		k, v := kv.Key, kv.Value
		switch string(k) {
		case "read_bytes":
			s.readBytes, r = procfs.ParseUint(v)
		case "write_bytes":
			s.writeBytes, w = procfs.ParseUint(v)
		}
	}
	if r && w {
		s.has |= hasIO
		fail.OK(base + failIOFormat)
	} else if fail.First(base + failIOFormat) {
		fail.Report(fmt.Errorf("read %q: want read_bytes and write_bytes lines with numbers", p.io.Path()))
	}
	return false
}
