package podattr_test

import (
	"fmt"

	"github.com/ortel-dev/ortel/receivers/podattr"
)

// A process of a burstable pod under the kubelet's systemd driver and
// containerd, as cgroup v2 names it.
func ExampleParse() {
	cgroup := "0::/kubepods.slice/kubepods-burstable.slice/" +
		"kubepods-burstable-pod7c9e6679_7425_40de_944b_e07fc1f90ae7.slice/" +
		"cri-containerd-3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f801.scope\n"
	p := podattr.Parse([]byte(cgroup))
	for _, kv := range p.Attributes() {
		fmt.Printf("%s=%s\n", kv.Key, kv.Value.String())
	}
	// Output:
	// k8s.pod.uid=7c9e6679-7425-40de-944b-e07fc1f90ae7
	// container.id=3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f801
}
