package podattr

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/semconv"
)

// Environment variables of the reader's own pod (the downward API), as
// ortel's Helm chart sets them.
const (
	EnvPodUID    = "K8S_POD_UID"
	EnvPodName   = "K8S_POD_NAME"
	EnvNamespace = "K8S_NAMESPACE_NAME"
)

// Pod is what is known about the pod and container of a process. Empty
// fields are unknown.
type Pod struct {
	UID         string // k8s.pod.uid
	ContainerID string // container.id
	Name        string // k8s.pod.name
	Namespace   string // k8s.namespace.name
}

// Attributes returns the known fields as semantic-convention attributes,
// in a fixed order; none for a process outside a container.
func (p Pod) Attributes() []attribute.KeyValue {
	var kv []attribute.KeyValue
	if p.UID != "" {
		kv = append(kv, semconv.K8sPodUid(p.UID))
	}
	if p.Name != "" {
		kv = append(kv, semconv.K8sPodName(p.Name))
	}
	if p.Namespace != "" {
		kv = append(kv, semconv.K8sNamespaceName(p.Namespace))
	}
	if p.ContainerID != "" {
		kv = append(kv, semconv.ContainerID(p.ContainerID))
	}
	return kv
}

// Read returns the pod and container of process pid from
// root/proc/PID/cgroup, completed with name and namespace from lookupEnv
// (os.LookupEnv when nil) when the pod is the reader's own. A process in
// no container is not an error: it returns a zero Pod.
func Read(root string, pid int, lookupEnv func(string) (string, bool)) (Pod, error) {
	path := filepath.Join(root, "proc", strconv.Itoa(pid), "cgroup")
	b, err := os.ReadFile(path)
	if err != nil {
		return Pod{}, fmt.Errorf("pod of pid %d: %w", pid, err)
	}
	p := Parse(b)
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if uid, ok := lookupEnv(EnvPodUID); ok && uid != "" && p.UID != "" && uid == p.UID {
		p.Name, _ = lookupEnv(EnvPodName)
		p.Namespace, _ = lookupEnv(EnvNamespace)
	}
	return p, nil
}

// Parse reads the text of a /proc/PID/cgroup file (cgroup v1, v2 or
// hybrid) and returns the pod UID and container ID its paths name. Of
// several hierarchies it keeps the one that names the most (v1 lists one
// line per controller, usually with the same path).
func Parse(cgroup []byte) Pod {
	var best Pod
	sc := bufio.NewScanner(bytes.NewReader(cgroup))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path; the path may hold ':'.
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		p := parsePath(parts[2])
		if score(p) > score(best) {
			best = p
		}
	}
	return best
}

func score(p Pod) int {
	n := 0
	if p.UID != "" {
		n += 2
	}
	if p.ContainerID != "" {
		n++
	}
	return n
}

// parsePath finds the pod UID and container ID in one cgroup path. The
// deepest match wins (a nested container below a pod's).
func parsePath(path string) Pod {
	var p Pod
	for seg := range strings.SplitSeq(path, "/") {
		if uid := podUID(seg); uid != "" {
			p.UID = uid
			continue
		}
		if id := containerID(seg); id != "" {
			p.ContainerID = id
		}
	}
	return p
}

// podUID returns the UID in a pod cgroup's name: "pod<UID>" (cgroupfs) or
// "kubepods[-<qos>]-pod<UID with _ for ->.slice" (systemd).
func podUID(seg string) string {
	if s, ok := strings.CutSuffix(seg, ".slice"); ok {
		if !strings.HasPrefix(s, "kubepods-") {
			return ""
		}
		i := strings.LastIndex(s, "-pod")
		if i < 0 {
			return ""
		}
		return validUID(strings.ReplaceAll(s[i+len("-pod"):], "_", "-"))
	}
	if s, ok := strings.CutPrefix(seg, "pod"); ok {
		return validUID(s)
	}
	return ""
}

// validUID accepts a UUID (8-4-4-4-12 hex digits) or, for a static pod,
// the 32 hex digits of its manifest hash; it returns it lower-cased.
func validUID(s string) string {
	s = strings.ToLower(s)
	switch len(s) {
	case 36:
		for i, c := range s {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if c != '-' {
					return ""
				}
			} else if !isHex(c) {
				return ""
			}
		}
		return s
	case 32:
		if allHex(s) {
			return s
		}
	}
	return ""
}

// runtimePrefixes are the scope-name prefixes of container runtimes.
var runtimePrefixes = []string{"cri-containerd-", "crio-", "docker-", "libpod-", "containerd-"}

// containerID returns the 64-hex-digit ID a container cgroup is named
// with: bare (cgroupfs, "/docker/ID") or as a runtime's systemd scope.
// CRI-O's monitor ("crio-conmon-ID.scope") is not the container.
func containerID(seg string) string {
	if s, ok := strings.CutSuffix(seg, ".scope"); ok {
		for _, pre := range runtimePrefixes {
			if id, ok := strings.CutPrefix(s, pre); ok && len(id) == 64 && allHex(id) {
				return id
			}
		}
		return ""
	}
	if len(seg) == 64 && allHex(seg) {
		return seg
	}
	return ""
}

func isHex(c rune) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func allHex(s string) bool {
	for _, c := range s {
		if !isHex(c) {
			return false
		}
	}
	return true
}
