package attach

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func mkdirWrite(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func TestParseMaps(t *testing.T) {
	in := `55d0c0a00000-55d0c0a01000 r--p 00000000 fd:01 131 /usr/bin/node
7f1c2a000000-7f1c2b000000 r-xp 00200000 00:2f 9 /cache/node/lib with space/libonnxruntime.so.1
7f1c2c000000-7f1c2c021000 rw-p 00000000 00:00 0 
7ffd1e5e0000-7ffd1e601000 rw-p 00000000 00:00 0                          [stack]
7f1c2d000000-7f1c2d001000 r-xp 00000000 00:2f 10 /tmp/gone.so (deleted)
`
	got, err := ParseMaps(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d mappings, want 3 file-backed: %+v", len(got), got)
	}
	m := got[1]
	if m.Path != "/cache/node/lib with space/libonnxruntime.so.1" || m.Perms != "r-xp" || m.Offset != 0x200000 || m.Start != 0x7f1c2a000000 || m.End != 0x7f1c2b000000 {
		t.Errorf("mapping %+v", m)
	}
	for _, bad := range []string{
		"zz-10 r-xp 0 0 0 /x\n",
		"10-5 r-xp 0 0 0 /x\n",
		"10-20 r-xp\n",
		"10-20 rx 0 0 0 /x\n",
	} {
		if _, err := ParseMaps(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("ParseMaps(%q) = %v, want an error naming line 1", bad, err)
		}
	}
}

func FuzzParseMaps(f *testing.F) {
	f.Add("7f1c2a000000-7f1c2b000000 r-xp 00200000 00:2f 9 /lib/libonnxruntime.so.1\n")
	f.Add("0-0 ---- 0 0 0\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMaps(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, m := range ms {
			if m.End < m.Start || !strings.HasPrefix(m.Path, "/") {
				t.Fatalf("accepted %+v", m)
			}
		}
	})
}

func FuzzParseEvent(f *testing.F) {
	f.Add(make([]byte, evHeader))
	f.Add(append([]byte{3, 0, 0, 0, 0, 0, 0, 0}, make([]byte, evCreate-8)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := parseEvent(b)
		if err == nil && (ev.kind < evRun || ev.kind > evReleaseSession) {
			t.Fatalf("accepted kind %d", ev.kind)
		}
	})
}
