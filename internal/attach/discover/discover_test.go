package discover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

const (
	ortPath    = "/usr/lib/libonnxruntime.so.1"
	libcPath   = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	pythonPath = "/usr/lib/python3/dist-packages/onnxruntime/capi/onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so"
	modelPath  = "/srv/models/det.onnx"
)

// host is a fixture host root: root/proc holds the processes, and each
// process's root link points at root/fs, which holds the files they map:
// the real ONNX Runtime library, an ELF file without OrtGetApiBase (this
// test binary) and a file named like the Python binding.
type host struct {
	t    *testing.T
	root string
}

func newHost(t *testing.T) *host {
	t.Helper()
	lib, err := ortlib.FindLibrary()
	if err != nil {
		testenv.Missing(t, "needs the ONNX Runtime library: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &host{t: t, root: t.TempDir()}
	h.link(lib, filepath.Join("fs", ortPath))
	h.link(self, filepath.Join("fs", libcPath))
	h.write(filepath.Join("fs", pythonPath), "not an ELF file: only the name counts")
	h.write(filepath.Join("fs", modelPath), "ONNX")
	for _, name := range []string{"meminfo", "sys/kernel/pid_max", "self/maps"} {
		h.write(filepath.Join("proc", name), "")
	}
	return h
}

func (h *host) write(rel, content string) {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *host) link(target, rel string) {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		h.t.Fatal(err)
	}
}

// start adds process pid, named comm, started at tick start, mapping
// these files (executable; the model read-only).
func (h *host) start(pid int, comm string, start uint64, files ...string) {
	h.t.Helper()
	dir := filepath.Join("proc", fmt.Sprint(pid))
	var maps strings.Builder
	fmt.Fprintf(&maps, "55d0c0a00000-55d0c0a21000 r-xp 00000000 00:00 0 \n") // anonymous
	for i, f := range files {
		perms := "r-xp"
		if f == modelPath {
			perms = "r--s"
		}
		lo := 0x7f0000000000 + uint64(i)<<24
		fmt.Fprintf(&maps, "%x-%x r--p 00000000 fd:01 %d %s\n", lo, lo+0x1000, 1000+i, f)
		fmt.Fprintf(&maps, "%x-%x %s 00001000 fd:01 %d %s\n", lo+0x1000, lo+0x9000, perms, 1000+i, f)
	}
	fmt.Fprintf(&maps, "7ffd1c3f0000-7ffd1c411000 rw-p 00000000 00:00 0 [stack]\n")
	h.write(filepath.Join(dir, "maps"), maps.String())
	// A name with a space and a parenthesis, as comm may hold.
	h.write(filepath.Join(dir, "stat"), fmt.Sprintf("%d (%s) x) S 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 8 0 %d 1000000 250 18446744073709551615\n", pid, comm, pid, pid, start))
	h.write(filepath.Join(dir, "comm"), comm+"\n")
	h.link(filepath.Join(h.root, "fs"), filepath.Join(dir, "root"))
}

func (h *host) exit(pid int) {
	h.t.Helper()
	if err := os.RemoveAll(filepath.Join(h.root, "proc", fmt.Sprint(pid))); err != nil {
		h.t.Fatal(err)
	}
}

// denied makes the scanner's maps reads of these pids fail with EACCES,
// as another user's process does without CAP_SYS_PTRACE.
func denied(s *Scanner, pids ...int) {
	s.open = func(path string) (*os.File, error) {
		for _, pid := range pids {
			if strings.HasSuffix(path, fmt.Sprintf("/proc/%d/maps", pid)) {
				return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
			}
		}
		return os.Open(path)
	}
}

func pids(ps []Process) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.PID)
	}
	return out
}

// TestScan: a process mapping the ONNX Runtime library is found (whatever
// else it maps), one mapping ORT's Python binding too; one mapping only
// other libraries and a model file is not, nor one with no file mapped;
// one whose maps cannot be read is counted, not listed.
func TestScan(t *testing.T) {
	h := newHost(t)
	h.start(100, "node", 5000, libcPath, ortPath, modelPath)
	h.start(200, "nginx", 6000, libcPath, modelPath)
	h.start(300, "python3", 7000, libcPath, pythonPath)
	h.start(400, "kthreadd", 1)
	h.start(500, "java", 8000, libcPath, ortPath)
	s := NewScanner(h.root)
	denied(s, 500)
	got, err := s.Scan()
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{
		{PID: 100, Start: 5000, Exe: "node", Library: ortPath},
		{PID: 300, Start: 7000, Exe: "python3", Library: pythonPath, Python: true},
	}
	if !slices.Equal(got.Processes, want) {
		t.Errorf("processes:\n got %+v\nwant %+v", got.Processes, want)
	}
	if got.Unreadable != 1 {
		t.Errorf("unreadable = %d, want 1 (pid 500)", got.Unreadable)
	}
}

// TestScanChecksEachFileOnce: a rescan opens no library it has checked
// (the ORT library and libc, two files, though several processes map
// them); a file no process maps any more is forgotten.
func TestScanChecksEachFileOnce(t *testing.T) {
	h := newHost(t)
	h.start(100, "node", 5000, libcPath, ortPath)
	h.start(101, "node", 5001, libcPath, ortPath)
	h.start(200, "nginx", 6000, libcPath)
	s := NewScanner(h.root)
	for i := range 3 {
		got, err := s.Scan()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pids(got.Processes), []int{100, 101}) {
			t.Fatalf("scan %d: pids %v, want [100 101]", i, pids(got.Processes))
		}
		if s.checked != 2 {
			t.Fatalf("scan %d: %d files checked in all, want 2 (ORT and libc, once each)", i, s.checked)
		}
	}
	h.exit(100)
	h.exit(101)
	if _, err := s.Scan(); err != nil {
		t.Fatal(err)
	}
	if len(s.cache) != 1 {
		t.Fatalf("cache holds %d files after the ORT processes exited, want 1 (libc)", len(s.cache))
	}
}

// TestTracker follows processes from scan to scan: the first step finds
// those running; then a process that starts is reported once, one that
// exits once, a reused pid (a new start time) as an exit and a start, and
// one that no longer maps ONNX Runtime but runs on as unloaded.
func TestTracker(t *testing.T) {
	h := newHost(t)
	h.start(100, "node", 5000, ortPath)
	h.start(200, "nginx", 6000, libcPath)
	tr := NewTracker(h.root)
	denied(tr.s, 900)
	var wantUnloaded []int
	step := func(wantStarted, wantExited []int, wantUnreadable int) {
		t.Helper()
		c, err := tr.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(pids(c.Started), wantStarted) || !slices.Equal(pids(c.Exited), wantExited) ||
			!slices.Equal(pids(c.Unloaded), wantUnloaded) || c.Unreadable != wantUnreadable {
			t.Fatalf("step: started %v, exited %v, unloaded %v, unreadable %d; want %v, %v, %v, %d",
				pids(c.Started), pids(c.Exited), pids(c.Unloaded), c.Unreadable, wantStarted, wantExited, wantUnloaded, wantUnreadable)
		}
		if c.Empty() != (len(wantStarted)+len(wantExited)+len(wantUnloaded) == 0) {
			t.Fatalf("Empty() = %v for %+v", c.Empty(), c)
		}
		wantUnloaded = nil
	}
	step([]int{100}, nil, 0)
	step(nil, nil, 0)
	h.start(300, "python3", 7000, pythonPath)
	h.start(900, "secret", 7100, ortPath)
	step([]int{300}, nil, 1)
	step(nil, nil, 1)
	h.exit(100)
	step(nil, []int{100}, 1)
	step(nil, nil, 1)
	h.exit(300)
	h.start(300, "node", 9000, ortPath) // the kernel reused 300
	step([]int{300}, []int{300}, 1)
	step(nil, nil, 1)
	// 300 exits but is not reaped yet (a zombie: no maps, state Z, same
	// start time): exited, not unloaded.
	h.start(301, "node", 9100, ortPath)
	step([]int{301}, nil, 1)
	h.write("proc/301/maps", "")
	h.write("proc/301/stat", "301 (node) Z 1 301 301 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 9100 0 0 18446744073709551615\n")
	step(nil, []int{301}, 1)
	// 300 unloads ONNX Runtime but runs on (same start time): unloaded,
	// not exited.
	h.exit(300)
	h.start(300, "node", 9000, libcPath)
	wantUnloaded = []int{300}
	step(nil, nil, 1)
	step(nil, nil, 1)
}

// TestScanNoProc: a root without proc is an error naming it.
func TestScanNoProc(t *testing.T) {
	root := t.TempDir()
	_, err := NewScanner(root).Scan()
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), root) {
		t.Fatalf("Scan of %s = %v, want an error naming %s/proc", root, err, root)
	}
}

func TestStartTime(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		stat string
		want uint64
		ok   bool
	}{
		{"42 (a) b) S 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 123456 0 0\n", 123456, true},
		{"42 (node) S 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0\n", 0, false},
		{"42 node S 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 7 0\n", 0, false},
		{"42 (x) S 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 -7 0\n", 0, false},
		{"", 0, false},
		{"42 (node) Z 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 123456 0 0\n", 0, false}, // exited, not reaped
	} {
		p := filepath.Join(dir, "stat")
		if err := os.WriteFile(p, []byte(tc.stat), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok := startTime(p); got != tc.want || ok != tc.ok {
			t.Errorf("startTime(%q) = %d, %v; want %d, %v", tc.stat, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseStartTime(f *testing.F) {
	f.Add([]byte("42 (a) b) S 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 123456 0 0\n"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := parseStartTime(b)
		if !ok && v != 0 {
			t.Fatalf("not ok but %d", v)
		}
	})
}

// BenchmarkRescanThisHost is one rescan of this machine's /proc after the
// first (the ELF checks cached): what --discover costs every interval.
func BenchmarkRescanThisHost(b *testing.B) {
	s := NewScanner("/")
	first, err := s.Scan()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Scan(); err != nil {
			b.Fatal(err)
		}
	}
	entries, _ := os.ReadDir("/proc")
	b.ReportMetric(float64(len(entries)), "proc-entries")
	b.ReportMetric(float64(len(first.Processes)), "ort-processes")
}

// BenchmarkFirstScanThisHost is a scan with an empty cache: every mapped
// executable file of every process is checked once.
func BenchmarkFirstScanThisHost(b *testing.B) {
	for b.Loop() {
		if _, err := NewScanner("/").Scan(); err != nil {
			b.Fatal(err)
		}
	}
}
