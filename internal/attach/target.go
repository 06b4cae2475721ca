package attach

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	upstream "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/ortel-dev/ortel/internal/configerr"
	"github.com/ortel-dev/ortel/receivers/podattr"
)

// ErrPython is returned for a Python process: the onnxruntime Python
// package calls ORT's C++ classes directly, not the C API table, so
// uprobes on the table's functions never fire for its runs.
var ErrPython = errors.New("it runs ONNX Runtime from Python; the Python binding calls ONNX Runtime's C++ API directly, not the C API that attach probes, so attach cannot see its runs yet (instrument it with the ORT profiler and ortel import instead)")

// ErrNoORT is returned for a process that has no ONNX Runtime library
// mapped.
var ErrNoORT error = configerr.New("attach", "it has no ONNX Runtime library loaded (no mapped file exports OrtGetApiBase); attach a process after it loaded onnxruntime, or use {Library} to catch every process that loads that library")

// Mapping is one file-backed line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Perms      string // "r-xp"
	Offset     uint64
	Dev        string // the file's device, "fd:01"
	Inode      uint64
	Path       string
}

// ParseMaps reads the file-backed mappings of a /proc/PID/maps file.
// Anonymous mappings and pseudo-files ([heap], [vdso], ...) are left out.
// A malformed line is an error naming its line number.
func ParseMaps(r io.Reader) ([]Mapping, error) {
	var out []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20) // lines are short; a long path grows it
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		// address perms offset dev inode [path]; the path may hold spaces.
		fields := strings.Fields(text)
		if len(fields) < 5 {
			return nil, fmt.Errorf("maps line %d: want at least 5 fields, got %d", line, len(fields))
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		off, err3 := strconv.ParseUint(fields[2], 16, 64)
		inode, err4 := strconv.ParseUint(fields[4], 10, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || end < start || len(fields[1]) != 4 {
			return nil, fmt.Errorf("maps line %d: malformed address, permissions or offset in %q", line, text)
		}
		if err4 != nil {
			return nil, fmt.Errorf("maps line %d: malformed inode in %q", line, text)
		}
		path := afterFields(text, 5) // the path may hold spaces
		if !strings.HasPrefix(path, "/") {
			continue
		}
		out = append(out, Mapping{Start: start, End: end, Perms: fields[1], Offset: off, Dev: fields[3], Inode: inode, Path: path})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read maps: %w", err)
	}
	return out, nil
}

// afterFields returns what follows the first n space-separated fields of
// s, without its leading spaces.
func afterFields(s string, n int) string {
	for i := 0; i < n; i++ {
		s = strings.TrimLeft(s, " \t")
		j := strings.IndexAny(s, " \t")
		if j < 0 {
			return ""
		}
		s = s[j:]
	}
	return strings.TrimLeft(s, " \t")
}

// Target is a process to attach to.
type Target struct {
	PID       int
	Exe       string    // the executable's base name, for example "node"
	Libraries []Library // every ONNX Runtime library it has mapped
}

// Library is one ONNX Runtime library file mapped by a process.
type Library struct {
	Path string // as the process mapped it
	// Open is the path ortel opens the file by: through /proc/PID/root,
	// so a process in another mount namespace works too.
	Open string
}

// FindTarget finds the ONNX Runtime libraries that process pid has mapped
// (every mapped file that exports OrtGetApiBase: a process may hold more
// than one copy, and each gets probes). It returns ErrPython for a
// Python process using ORT's Python binding, and ErrNoORT when no ORT
// library is mapped, wrapped with the process's id and name.
func FindTarget(pid int) (*Target, error) {
	return findTarget("/proc", pid)
}

func findTarget(procRoot string, pid int) (*Target, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	f, err := os.Open(filepath.Join(dir, "maps"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("process %d: no such process", pid)
		}
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("process %d: reading its memory map needs root or CAP_SYS_PTRACE over it: %w", pid, err)
		}
		return nil, fmt.Errorf("process %d: read its memory map: %w", pid, err)
	}
	maps, err := ParseMaps(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	t := &Target{PID: pid, Exe: ExeName(dir)}
	seen := map[string]bool{}
	for _, m := range maps {
		if IsPythonBinding(m.Path) {
			return nil, fmt.Errorf("process %d (%s): %w", pid, t.Exe, ErrPython)
		}
	}
	for _, m := range maps {
		if seen[m.Path] || strings.HasSuffix(m.Path, " (deleted)") {
			continue
		}
		seen[m.Path] = true
		open := filepath.Join(dir, "root", m.Path)
		if IsORTLibrary(open) {
			t.Libraries = append(t.Libraries, Library{Path: m.Path, Open: open})
		}
	}
	if len(t.Libraries) == 0 {
		return nil, fmt.Errorf("process %d (%s): %w", pid, t.Exe, ErrNoORT)
	}
	return t, nil
}

// IsPythonBinding reports whether path names ONNX Runtime's Python
// binding (onnxruntime_pybind11_state*.so), which a process using ORT from
// Python maps.
func IsPythonBinding(path string) bool {
	return strings.Contains(filepath.Base(path), "onnxruntime_pybind11_state")
}

// IsORTLibrary reports whether the file at path is an ELF file exporting
// OrtGetApiBase: an ONNX Runtime library, whatever its name.
func IsORTLibrary(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return namesOrtGetApiBase(f) && exportsOrt(f) == nil
}

// namesOrtGetApiBase reports whether f's dynamic string table holds the
// name OrtGetApiBase, reading it in small chunks: a file that does not is
// ruled out without building every one of its symbols (node's table names
// 75,000 symbols in 5 MB; building them cost the agent 15 MB of peak RSS).
func namesOrtGetApiBase(f *elf.File) bool {
	sec := f.Section(".dynstr")
	if sec == nil {
		return false
	}
	// Each name in the table follows a NUL and ends with one.
	return streamContains(sec.Open(), []byte("\x00OrtGetApiBase\x00"), 32<<10)
}

// streamContains reports whether r holds needle, reading it through a
// buffer of size bytes (at least len(needle)). A read error is "no".
func streamContains(r io.Reader, needle []byte, size int) bool {
	buf := make([]byte, max(size, len(needle)))
	have := 0
	for {
		n, err := r.Read(buf[have:])
		have += n
		if bytes.Contains(buf[:have], needle) {
			return true
		}
		if err != nil {
			return false // io.EOF: not there
		}
		// Keep the tail that may hold the start of needle.
		if keep := len(needle) - 1; have > keep {
			copy(buf, buf[have-keep:have])
			have = keep
		}
	}
}

// processAttrsAt are the attributes of a target process, read under
// root/proc: process.pid, process.executable.name and, when recognised,
// process.runtime.name; for a process in a container, k8s.pod.uid and
// container.id from its cgroup (and k8s.pod.name and k8s.namespace.name
// when it is in attach's own pod, see receivers/podattr). They go on run
// spans and on the run metrics, whose series are per process already.
func processAttrsAt(root string, pid uint32) []attribute.KeyValue {
	exe := ExeName(filepath.Join(root, "proc", strconv.FormatUint(uint64(pid), 10)))
	attrs := []attribute.KeyValue{upstream.ProcessPID(int(pid))}
	if exe != "" {
		attrs = append(attrs, upstream.ProcessExecutableName(exe))
	}
	if rt := runtimeName(exe); rt != "" {
		attrs = append(attrs, upstream.ProcessRuntimeName(rt))
	}
	if pod, err := podattr.Read(root, int(pid), nil); err == nil {
		attrs = append(attrs, pod.Attributes()...)
	}
	return attrs
}

// ExeName is the base name of the executable of the process whose /proc
// folder is procDir, from its exe link, else its comm ("" if unknown).
func ExeName(procDir string) string {
	if p, err := os.Readlink(filepath.Join(procDir, "exe")); err == nil {
		return filepath.Base(strings.TrimSuffix(p, " (deleted)"))
	}
	if b, err := os.ReadFile(filepath.Join(procDir, "comm")); err == nil {
		return strings.TrimSpace(string(b))
	}
	return ""
}

// runtimeName names the language runtime of an executable, for the
// process.runtime.name attribute; "" when it is not recognised.
func runtimeName(exe string) string {
	switch {
	case exe == "node" || exe == "nodejs" || exe == "bun" || exe == "deno":
		return exe
	case strings.HasPrefix(exe, "python"):
		return "cpython"
	case exe == "java":
		return "java"
	case exe == "dotnet":
		return "dotnet"
	}
	return ""
}
