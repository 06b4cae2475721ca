package discover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/attach"
)

// Process is a process that maps ONNX Runtime.
type Process struct {
	PID int
	// Start is when the process started, in clock ticks since boot (field
	// 22 of /proc/PID/stat): with PID it names the process across the
	// kernel's reuse of ids.
	Start uint64
	Exe   string // the executable's base name, "node"; "" when unknown
	// Library is the first ONNX Runtime file it maps, as it mapped it: a
	// library exporting OrtGetApiBase, or the Python binding.
	Library string
	Python  bool // Library is ONNX Runtime's Python binding
}

// String names the process in a status line: "4242 (node)".
func (p Process) String() string {
	if p.Exe == "" {
		return strconv.Itoa(p.PID)
	}
	return fmt.Sprintf("%d (%s)", p.PID, p.Exe)
}

// fileKey names a mapped file: its device and inode as the maps line gives
// them, and its path (an inode number can be reused by a new file).
type fileKey struct {
	dev   string
	inode uint64
	path  string
}

// Scanner lists the processes under a host root that map ONNX Runtime. It
// remembers which mapped files are ONNX Runtime libraries between scans.
// It is not safe for concurrent use.
type Scanner struct {
	root  string
	cache map[fileKey]bool // is the file an ONNX Runtime library
	// open opens a /proc file; tests inject permission errors with it.
	open func(string) (*os.File, error)
	// checked counts the files whose ELF symbols were read (tests).
	checked int
}

// NewScanner returns a Scanner reading root/proc ("" is "/").
func NewScanner(root string) *Scanner {
	if root == "" {
		root = "/"
	}
	return &Scanner{root: root, cache: map[fileKey]bool{}, open: os.Open}
}

// Scan is one scan's result.
type Scan struct {
	Processes []Process // by pid
	// Unreadable counts the processes whose maps could not be read
	// (permission): they are left out.
	Unreadable int
}

// Scan lists every process under the root that maps ONNX Runtime. A
// process that exits during the scan is left out. It fails only when the
// root's proc folder cannot be listed.
func (s *Scanner) Scan() (Scan, error) {
	procDir := filepath.Join(s.root, "proc")
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return Scan{}, fmt.Errorf("discover: list processes: %w", err)
	}
	var out Scan
	seen := map[fileKey]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue // not a process: self, sys, meminfo...
		}
		p, ok, err := s.process(procDir, pid, seen)
		switch {
		case errors.Is(err, fs.ErrPermission):
			out.Unreadable++
		case ok:
			out.Processes = append(out.Processes, p)
		}
	}
	// Forget the files no process maps any more, so the cache stays the
	// size of what is mapped now.
	for k := range s.cache {
		if !seen[k] {
			delete(s.cache, k)
		}
	}
	slices.SortFunc(out.Processes, func(a, b Process) int { return a.PID - b.PID })
	return out, nil
}

// process reads one process. It reports whether it maps ONNX Runtime, and
// an error matching fs.ErrPermission when its maps cannot be read; a
// process that is gone or has no readable start time is not one.
func (s *Scanner) process(procDir string, pid int, seen map[fileKey]bool) (Process, bool, error) {
	dir := filepath.Join(procDir, strconv.Itoa(pid))
	f, err := s.open(filepath.Join(dir, "maps"))
	if err != nil {
		return Process{}, false, err
	}
	maps, err := attach.ParseMaps(f)
	f.Close()
	if err != nil {
		return Process{}, false, err
	}
	lib, python := s.library(dir, maps, seen)
	if lib == "" {
		return Process{}, false, nil
	}
	start, ok := startTime(filepath.Join(dir, "stat"))
	if !ok {
		return Process{}, false, nil // exited meanwhile, or a zombie
	}
	return Process{PID: pid, Start: start, Exe: attach.ExeName(dir), Library: lib, Python: python}, true, nil
}

// library returns the first ONNX Runtime file among a process's mappings,
// and whether it is the Python binding; "" when there is none. Only files
// mapped executable are checked: a library always has code mapped, while
// data files (models, fonts, locale archives) do not. Every file checked
// is marked in seen.
func (s *Scanner) library(dir string, maps []attach.Mapping, seen map[fileKey]bool) (string, bool) {
	for _, m := range maps {
		if len(m.Perms) < 3 || m.Perms[2] != 'x' {
			continue
		}
		if attach.IsPythonBinding(m.Path) {
			return m.Path, true
		}
	}
	for _, m := range maps {
		if len(m.Perms) < 3 || m.Perms[2] != 'x' || strings.HasSuffix(m.Path, " (deleted)") {
			continue
		}
		k := fileKey{dev: m.Dev, inode: m.Inode, path: m.Path}
		seen[k] = true
		is, known := s.cache[k]
		if !known {
			s.checked++
			is = attach.IsORTLibrary(filepath.Join(dir, "root", m.Path))
			s.cache[k] = is
		}
		if is {
			return m.Path, false
		}
	}
	return "", false
}

// startTime reads field 22 of a /proc/PID/stat file, the process's start
// time in clock ticks since boot. The fields are counted after the last
// ')', since the name before it may hold spaces and parentheses. A process
// that has exited and waits to be reaped (state Z or X, field 3) has none:
// its memory is gone, its maps are empty.
func startTime(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	return parseStartTime(b)
}

// parseStartTime reads the start time out of the text of a stat file.
func parseStartTime(b []byte) (uint64, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(b[i+1:])
	const startField = 22 - 3 // fields after ')' start at field 3, state
	if len(fields) <= startField {
		return 0, false
	}
	if state := string(fields[0]); state == "Z" || state == "X" {
		return 0, false
	}
	v, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	return v, err == nil
}

// Change is what a Tracker's scan found different from the previous one.
type Change struct {
	Started []Process // processes that map ONNX Runtime and were not known
	Exited  []Process // known processes that exited
	// Unloaded are known processes still running that no longer map
	// ONNX Runtime, or whose maps can no longer be read.
	Unloaded   []Process
	Unreadable int // processes whose maps could not be read, this scan
}

// Empty reports whether nothing started, exited or unloaded.
func (c Change) Empty() bool {
	return len(c.Started) == 0 && len(c.Exited) == 0 && len(c.Unloaded) == 0
}

// Tracker follows the processes that map ONNX Runtime from scan to scan.
// It is not safe for concurrent use.
type Tracker struct {
	s     *Scanner
	known map[int]Process
}

// NewTracker returns a Tracker reading root/proc ("" is "/"); it knows no
// process until its first Step.
func NewTracker(root string) *Tracker {
	return &Tracker{s: NewScanner(root), known: map[int]Process{}}
}

// Step scans once and returns what changed since the previous Step: the
// first returns every process found as started. A process whose id was
// reused (another start time) is both exited and started. On error nothing is
// changed.
func (t *Tracker) Step() (Change, error) {
	sc, err := t.s.Scan()
	if err != nil {
		return Change{}, err
	}
	c := Change{Unreadable: sc.Unreadable}
	now := make(map[int]Process, len(sc.Processes))
	for _, p := range sc.Processes {
		now[p.PID] = p
		if old, ok := t.known[p.PID]; !ok || old.Start != p.Start {
			c.Started = append(c.Started, p)
		}
	}
	for pid, old := range t.known {
		if p, ok := now[pid]; ok && p.Start == old.Start {
			continue
		}
		if _, ok := now[pid]; !ok {
			stat := filepath.Join(t.s.root, "proc", strconv.Itoa(pid), "stat")
			if start, ok := startTime(stat); ok && start == old.Start {
				c.Unloaded = append(c.Unloaded, old)
				continue
			}
		}
		c.Exited = append(c.Exited, old)
	}
	byPID := func(a, b Process) int { return a.PID - b.PID }
	slices.SortFunc(c.Exited, byPID)
	slices.SortFunc(c.Unloaded, byPID)
	t.known = now
	return c, nil
}

// Run calls Step now and then every interval until ctx ends, and calls
// apply with each change that is not empty (the first one even when
// empty, so the caller learns the unreadable count once) or with the
// error of a scan that failed.
func (t *Tracker) Run(ctx context.Context, every time.Duration, apply func(Change, error)) {
	first := true
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		c, err := t.Step()
		if err != nil || first || !c.Empty() {
			apply(c, err)
		}
		first = false
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
