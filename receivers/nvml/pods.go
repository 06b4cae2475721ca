package nvml

import "github.com/ortel-dev/ortel/receivers/internal/options"

// WithAllProcesses reports the GPU memory and utilization of every process
// running on each GPU, not only the WithPIDs ones, and attributes each to
// its Kubernetes pod: every nvidia.gpu.process.* point of a process in a
// container carries its k8s.pod.uid and container.id (and k8s.pod.name and
// k8s.namespace.name when it is in the reader's own pod), read once per
// process from /proc/PID/cgroup under the root (see WithRoot; package
// receivers/podattr). This is per-pod GPU attribution for a node agent:
// the GPU tells which processes use it, the cgroup which pod each runs
// in. A process whose cgroup cannot be read (gone, no permission) is
// reported with its pid alone. Default: off, only WithPIDs (or the calling
// process) is reported, with its pid.
func WithAllProcesses() Option {
	return func(c *config) {
		c.allProcs = true
		c.ResolveRoot() // ORTEL_HOST_ROOT, unless WithRoot set one
	}
}

// WithRoot reads /proc/PID/cgroup under root instead of "/" for
// WithAllProcesses (the host's file system mounted into a container, or a
// fixture tree in tests; PIDs are NVML's, the host's). It overrides the
// ORTEL_HOST_ROOT environment variable. Default: "/".
func WithRoot(root string) Option { return options.Root[config](root) }
