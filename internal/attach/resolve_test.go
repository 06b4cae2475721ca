package attach

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

// ortLibrary returns the cached library of an ONNX Runtime version, or
// skips (locally) / fails (CI) when it has not been fetched.
func ortLibrary(t testing.TB, version string) string {
	t.Helper()
	p := filepath.Join(ortlib.CacheDir(), "onnxruntime", version, "libonnxruntime.so.1")
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, "needs ONNX Runtime %s (%v); fetch it with: %s", version, err, ortlib.FetchHint)
	}
	return p
}

func TestResolveRealLibraries(t *testing.T) {
	for _, v := range []string{"1.24.3", "1.30.0"} {
		t.Run(v, func(t *testing.T) {
			lib := ortLibrary(t, v)
			o, err := Resolve(lib)
			if err != nil {
				t.Fatal(err)
			}
			if o.Version != v {
				t.Errorf("version %q, want %q", o.Version, v)
			}
			if len(o.BuildID) < 16 {
				t.Errorf("build id %q, want a GNU build id", o.BuildID)
			}
			f, err := elf.Open(lib)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			seen := map[uint64]Function{}
			for fn, off := range o.File {
				if prev, dup := seen[off]; dup {
					t.Errorf("%s and %s both at %#x", Function(fn), prev, off)
				}
				seen[off] = Function(fn)
				// Every offset lies in an executable segment of the file and
				// points at code, not zero padding.
				inExec := false
				for _, p := range f.Progs {
					if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 && off >= p.Off && off < p.Off+p.Filesz {
						inExec = true
					}
				}
				if !inExec {
					t.Errorf("%s at %#x: outside the executable segment", Function(fn), off)
				}
				buf := make([]byte, 4)
				fh, err := os.Open(lib)
				if err != nil {
					t.Fatal(err)
				}
				_, err = fh.ReadAt(buf, int64(off))
				fh.Close()
				if err != nil || (buf[0] == 0 && buf[1] == 0 && buf[2] == 0 && buf[3] == 0) {
					t.Errorf("%s at %#x: %v %x, not code", Function(fn), off, err, buf)
				}
			}
			// A second resolve comes from the build-id cache, with the
			// same offsets.
			o2, err := Resolve(lib)
			if err != nil || o2.File != o.File {
				t.Errorf("cached resolve: %v, %v vs %v", err, o2, o)
			}
		})
	}
}

func TestResolveRefusesNonORT(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(self); err == nil {
		t.Fatal("Resolve accepted a file that is not ONNX Runtime")
	}
	if _, err := Resolve(filepath.Join(t.TempDir(), "missing.so")); err == nil {
		t.Fatal("Resolve accepted a missing file")
	}
}

func TestParseBuildIDNote(t *testing.T) {
	note := func(name string, typ uint32, desc []byte) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
		b = binary.LittleEndian.AppendUint32(b, typ)
		b = append(b, name...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		b = append(b, desc...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	other := note("GNU\x00", 1, []byte{0, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0})
	id := note("GNU\x00", 3, []byte{0xde, 0xad, 0xbe, 0xef, 0x01})
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"after another note", append(append([]byte{}, other...), id...), "deadbeef01"},
		{"alone", id, "deadbeef01"},
		{"none", other, ""},
		{"truncated", id[:len(id)-4], ""},
		{"empty", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseBuildIDNote(tc.data, binary.LittleEndian); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzParseBuildIDNote(f *testing.F) {
	f.Add([]byte{4, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 1, 2, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		parseBuildIDNote(data, binary.LittleEndian)
	})
}
