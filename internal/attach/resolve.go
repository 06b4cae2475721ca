package attach

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
)

// The entries of ONNX Runtime's OrtApi table that attach probes, by their
// index in the struct (onnxruntime_c_api.h; the table is append-only, so
// the indexes hold for every version since they were added).
const (
	idxCreateSession          = 7
	idxCreateSessionFromArray = 8
	idxRun                    = 9
	idxReleaseSession         = 95
	idxRunWithBinding         = 133
)

// Function names one OrtApi entry each; Offsets is indexed by them.
type Function int

// The probed functions.
const (
	FuncRun Function = iota
	FuncRunWithBinding
	FuncCreateSession
	FuncCreateSessionFromArray
	FuncReleaseSession
	numFuncs
)

var funcIndex = [numFuncs]int{
	FuncRun:                    idxRun,
	FuncRunWithBinding:         idxRunWithBinding,
	FuncCreateSession:          idxCreateSession,
	FuncCreateSessionFromArray: idxCreateSessionFromArray,
	FuncReleaseSession:         idxReleaseSession,
}

var funcNames = [numFuncs]string{"Run", "RunWithBinding", "CreateSession", "CreateSessionFromArray", "ReleaseSession"}

func (f Function) String() string {
	if f < 0 || f >= numFuncs {
		return fmt.Sprintf("Function(%d)", int(f))
	}
	return funcNames[f]
}

// Offsets are where the probed functions of one library file start, as
// file offsets (what a uprobe takes).
type Offsets struct {
	Path    string // the file the offsets were resolved from
	BuildID string // GNU build id, hex; "" when the file has none
	Version string // ONNX Runtime's version string, for example "1.24.3"
	File    [numFuncs]uint64
}

// offsetCache holds resolved offsets by build id: a library file is
// loaded into this process once, whatever path or process it is seen in.
var offsetCache sync.Map // build id -> *Offsets

// Resolve finds the file offsets of Run, RunWithBinding, CreateSession,
// CreateSessionFromArray and ReleaseSession in the ONNX Runtime library at
// path. The library is stripped, so they cannot be found by name: Resolve
// loads the same file into this process, reads the function pointers from
// the OrtApi table that OrtGetApiBase()->GetApi returns, subtracts the
// load base and converts each virtual address into a file offset through
// the ELF program headers. Results are cached by GNU build id.
func Resolve(path string) (*Offsets, error) {
	f, err := elf.Open(path)
	if err != nil {
		if _, serr := os.Stat(path); serr != nil {
			return nil, fmt.Errorf("ONNX Runtime library %q: %w", path, serr)
		}
		return nil, fmt.Errorf("ONNX Runtime library %q: not an ELF shared library (%v)", path, err)
	}
	defer f.Close()
	if err := exportsOrt(f); err != nil {
		return nil, fmt.Errorf("ONNX Runtime library %q: %w", path, err)
	}
	id := buildID(f)
	if id != "" {
		if o, ok := offsetCache.Load(id); ok {
			c := *o.(*Offsets)
			c.Path = path
			return &c, nil
		}
	}
	idx := funcIndex[:]
	vaddrs, version, err := apiTable(path, idx)
	if err != nil {
		return nil, fmt.Errorf("load ONNX Runtime library %q to read its API table: %w", path, err)
	}
	o := &Offsets{Path: path, BuildID: id, Version: version}
	for i, va := range vaddrs {
		off, err := fileOffset(f, va)
		if err != nil {
			return nil, fmt.Errorf("ONNX Runtime library %q, %s: %w", path, Function(i), err)
		}
		o.File[i] = off + skipEndbr(f, off)
	}
	if id != "" {
		offsetCache.Store(id, o)
	}
	c := *o
	return &c, nil
}

// errNotORT says a file is not an ONNX Runtime library.
var errNotORT = errors.New("does not export OrtGetApiBase, so it is not an ONNX Runtime library")

// exportsOrt reports whether f exports OrtGetApiBase.
func exportsOrt(f *elf.File) error {
	syms, err := f.DynamicSymbols()
	if err != nil {
		return errNotORT
	}
	for _, s := range syms {
		if s.Name == "OrtGetApiBase" && s.Section != elf.SHN_UNDEF && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return nil
		}
	}
	return errNotORT
}

// fileOffset converts a virtual address of f into a file offset, through
// the executable PT_LOAD segment that holds it.
func fileOffset(f *elf.File, vaddr uint64) (uint64, error) {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 {
			continue
		}
		if vaddr >= p.Vaddr && vaddr < p.Vaddr+p.Filesz {
			return vaddr - p.Vaddr + p.Off, nil
		}
	}
	return 0, fmt.Errorf("address %#x is in no executable segment", vaddr)
}

// endbr64 is the CET landing pad instruction that starts most functions
// of a library built with -fcf-protection.
var endbr64 = []byte{0xf3, 0x0f, 0x1e, 0xfa}

// skipEndbr returns 4 when the function at file offset off starts with
// endbr64, else 0. The kernel cannot emulate endbr64, so a uprobe on it
// single-steps the instruction out of line: an extra trap measured at
// ~12 µs a call in a VM here. The next instruction (push %rbp, mov) is
// emulated, and no register or the stack has changed yet, so the
// arguments and the return address are where the probes read them.
func skipEndbr(f *elf.File, off uint64) uint64 {
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD || off < p.Off || off+4 > p.Off+p.Filesz {
			continue
		}
		b := make([]byte, 4)
		if _, err := p.ReadAt(b, int64(off-p.Off)); err == nil && bytes.Equal(b, endbr64) {
			return 4
		}
		return 0
	}
	return 0
}

// buildID returns f's GNU build id in hex, or "".
func buildID(f *elf.File) string {
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			continue
		}
		if id := parseBuildIDNote(data, f.ByteOrder); id != "" {
			return id
		}
	}
	return ""
}

// parseBuildIDNote walks the ELF notes in data and returns the GNU build
// id in hex, or "" when there is none or the notes are malformed.
func parseBuildIDNote(data []byte, bo binary.ByteOrder) string {
	align := func(n uint64) uint64 { return (n + 3) &^ 3 }
	for len(data) >= 12 {
		namesz := uint64(bo.Uint32(data[0:]))
		descsz := uint64(bo.Uint32(data[4:]))
		typ := bo.Uint32(data[8:])
		data = data[12:]
		n := uint64(len(data))
		if align(namesz) > n || descsz > n-align(namesz) {
			return ""
		}
		name := data[:namesz]
		desc := data[align(namesz) : align(namesz)+descsz]
		if typ == 3 && string(bytes.TrimRight(name, "\x00")) == "GNU" && len(desc) > 0 { // NT_GNU_BUILD_ID
			return hex.EncodeToString(desc)
		}
		next := align(namesz) + align(descsz)
		if next > n {
			return ""
		}
		data = data[next:]
	}
	return ""
}
