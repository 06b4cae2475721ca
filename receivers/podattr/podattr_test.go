package podattr

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

const (
	cid = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f801"
	uid = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
)

func noEnv(string) (string, bool) { return "", false }

// TestReadFixtures reads /proc/PID/cgroup files of every layout in use
// from fixture trees under testdata.
func TestReadFixtures(t *testing.T) {
	cases := []struct {
		tree string
		pid  int
		want Pod
	}{
		{"v2-systemd-containerd", 101, Pod{UID: uid, ContainerID: cid}}, // seen from another cgroup namespace
		{"v2-systemd-containerd", 102, Pod{UID: uid, ContainerID: cid}},
		{"v2-cgroupfs", 201, Pod{UID: uid, ContainerID: cid}},
		{"v2-systemd-crio", 301, Pod{UID: uid, ContainerID: cid}},
		{"v2-systemd-crio", 302, Pod{UID: uid}}, // conmon: the pod's, not the container
		{"v1-cgroupfs-docker", 401, Pod{UID: uid, ContainerID: cid}},
		{"v1-systemd-docker", 501, Pod{UID: uid, ContainerID: cid}},
		{"docker-only", 601, Pod{ContainerID: cid}},
		{"docker-only", 602, Pod{ContainerID: cid}},
		{"static-pod", 701, Pod{UID: "6c1a5b0e8b2f4f3e9a0d1c2b3a495867", ContainerID: cid}},
		{"host", 801, Pod{}},
		{"host", 802, Pod{}},
		{"host", 803, Pod{}},
		{"lookalike", 901, Pod{}},
		{"lookalike", 902, Pod{}},
		{"lookalike", 903, Pod{}},
	}
	for _, tc := range cases {
		t.Run(tc.tree+"/"+strconv.Itoa(tc.pid), func(t *testing.T) {
			got, err := Read("testdata/"+tc.tree, tc.pid, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Read = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestReadOwnPod: name and namespace come from the reader's downward-API
// environment only when the process is in the reader's own pod.
func TestReadOwnPod(t *testing.T) {
	env := func(u string) func(string) (string, bool) {
		m := map[string]string{EnvPodUID: u, EnvPodName: "infer-7d9f", EnvNamespace: "ml"}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	got, err := Read("testdata/v2-cgroupfs", 201, env(uid))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Pod{UID: uid, ContainerID: cid, Name: "infer-7d9f", Namespace: "ml"}); got != want {
		t.Errorf("own pod: %+v, want %+v", got, want)
	}
	got, err = Read("testdata/v2-cgroupfs", 201, env("00000000-0000-0000-0000-000000000000"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "" || got.Namespace != "" {
		t.Errorf("another pod got the reader's name/namespace: %+v", got)
	}
	// A process in no pod never takes the reader's name, even with an
	// empty UID on both sides.
	got, _ = Read("testdata/host", 803, env(""))
	if got != (Pod{}) {
		t.Errorf("host process: %+v", got)
	}
}

func TestReadMissing(t *testing.T) {
	_, err := Read("testdata/host", 999, noEnv)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "pid 999") {
		t.Fatalf("Read of a missing pid: %v, want not-exist naming pid 999", err)
	}
}

func TestAttributes(t *testing.T) {
	got := Pod{UID: uid, ContainerID: cid, Name: "p", Namespace: "ns"}.Attributes()
	want := []attribute.KeyValue{
		attribute.String("k8s.pod.uid", uid), attribute.String("k8s.pod.name", "p"),
		attribute.String("k8s.namespace.name", "ns"), attribute.String("container.id", cid),
	}
	if len(got) != len(want) {
		t.Fatalf("Attributes = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Attributes[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if kv := (Pod{}).Attributes(); len(kv) != 0 {
		t.Errorf("zero Pod has attributes %v", kv)
	}
}

// FuzzParse: any input parses without panicking, and what it returns is
// well-formed.
func FuzzParse(f *testing.F) {
	f.Add([]byte("0::/kubepods/pod" + uid + "/" + cid + "\n"))
	f.Add([]byte("1:name=systemd:/kubepods.slice/kubepods-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice/docker-" + cid + ".scope"))
	f.Add([]byte("::\n0::/\n:::::"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := Parse(b)
		if p.UID != "" && validUID(p.UID) != p.UID {
			t.Errorf("UID %q is not a pod UID", p.UID)
		}
		if p.ContainerID != "" && (len(p.ContainerID) != 64 || !allHex(p.ContainerID)) {
			t.Errorf("container ID %q is not 64 hex digits", p.ContainerID)
		}
	})
}
