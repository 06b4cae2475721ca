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
