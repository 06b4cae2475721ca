package attach

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
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
	if m.Path != "/cache/node/lib with space/libonnxruntime.so.1" || m.Perms != "r-xp" || m.Offset != 0x200000 || m.Start != 0x7f1c2a000000 || m.End != 0x7f1c2b000000 || m.Dev != "00:2f" || m.Inode != 9 {
		t.Errorf("mapping %+v", m)
	}
	for _, bad := range []string{
		"zz-10 r-xp 0 0 0 /x\n",
		"10-5 r-xp 0 0 0 /x\n",
		"10-20 r-xp\n",
		"10-20 rx 0 0 0 /x\n",
		"10-20 r-xp 0 fd:01 inode /x\n",
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

// TestProcessAttrsPod: a target in a pod carries its pod UID and container
// ID (cgroup v2, systemd driver, containerd), and a target on the host
// carries neither.
func TestProcessAttrsPod(t *testing.T) {
	const (
		uid = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
		cid = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f801"
	)
	root := t.TempDir()
	for path, text := range map[string]string{
		"proc/4242/comm":   "node\n",
		"proc/4242/cgroup": "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice/cri-containerd-" + cid + ".scope\n",
		"proc/4343/comm":   "server\n",
		"proc/4343/cgroup": "0::/system.slice/inference.service\n",
	} {
		if err := mkdirWrite(filepath.Join(root, path), text); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for _, kv := range processAttrsAt(root, 4242) {
		got[string(kv.Key)] = kv.Value.String()
	}
	want := map[string]string{"process.pid": "4242", "process.executable.name": "node", "process.runtime.name": "node",
		"k8s.pod.uid": uid, "container.id": cid}
	if len(got) != len(want) {
		t.Errorf("attributes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, kv := range processAttrsAt(root, 4343) {
		if strings.HasPrefix(string(kv.Key), "k8s.") || kv.Key == "container.id" {
			t.Errorf("host process carries %s", kv.Key)
		}
	}
}

// TestStreamContains finds the needle at every offset, across every
// buffer boundary, with reads of one byte or of the whole buffer.
func TestStreamContains(t *testing.T) {
	needle := []byte("\x00OrtGetApiBase\x00")
	for size := len(needle); size <= 3*len(needle); size++ {
		for at := 0; at <= 4*size; at++ {
			hay := append(bytes.Repeat([]byte("x"), at), needle...)
			hay = append(hay, "tail"...)
			for _, r := range []io.Reader{bytes.NewReader(hay), iotest.OneByteReader(bytes.NewReader(hay)), iotest.HalfReader(bytes.NewReader(hay))} {
				if !streamContains(r, needle, size) {
					t.Fatalf("size %d, at %d: not found", size, at)
				}
			}
			broken := append(bytes.Repeat([]byte("x"), at), needle[:len(needle)-1]...)
			if streamContains(bytes.NewReader(broken), needle, size) {
				t.Fatalf("size %d, at %d: found a cut needle", size, at)
			}
		}
	}
	if streamContains(iotest.ErrReader(io.ErrUnexpectedEOF), needle, 64) {
		t.Fatal("found in a failing reader")
	}
}

// TestIsORTLibrary: the real ONNX Runtime libraries are; this test binary,
// node (whose 5 MB string table the name filter skips) and a text file
// are not.
func TestIsORTLibrary(t *testing.T) {
	var libs []string
	for _, v := range []string{"1.24.3", "1.30.0"} {
		p := filepath.Join(ortlib.CacheDir(), "onnxruntime", v, "libonnxruntime.so.1")
		if _, err := os.Stat(p); err != nil {
			testenv.Missing(t, "needs ONNX Runtime %s (%v): scripts/fetch.sh ort", v, err)
		}
		libs = append(libs, p)
	}
	for _, p := range libs {
		if !IsORTLibrary(p) {
			t.Errorf("IsORTLibrary(%s) = false", p)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "OrtGetApiBase.txt")
	if err := os.WriteFile(text, []byte("\x00OrtGetApiBase\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	not := []string{self, text}
	if node, err := exec.LookPath("node"); err == nil {
		not = append(not, node)
	}
	for _, p := range not {
		if IsORTLibrary(p) {
			t.Errorf("IsORTLibrary(%s) = true", p)
		}
	}
}

// TestParseMapsLongPath: a line longer than the scanner's first buffer
// (a deep path) still parses.
func TestParseMapsLongPath(t *testing.T) {
	path := "/" + strings.Repeat("d/", 5000) + "libonnxruntime.so.1"
	got, err := ParseMaps(strings.NewReader("7f1c2a000000-7f1c2b000000 r-xp 00000000 fd:01 42 " + path + "\n"))
	if err != nil || len(got) != 1 || got[0].Path != path || got[0].Inode != 42 {
		t.Fatalf("ParseMaps of a %d-byte path: %v, %v", len(path), len(got), err)
	}
}
