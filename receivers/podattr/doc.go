// Package podattr attributes a process to its Kubernetes pod and its
// container from /proc/PID/cgroup, so the readings of a process (the
// process receiver) and its ONNX Runtime runs (ortel attach) carry the pod
// they belong to.
//
// The cgroup path of a container's process names both, under every layout
// in use: cgroup v1 and v2, the systemd and cgroupfs drivers of the
// kubelet, and the container runtimes' scope names (containerd
// "cri-containerd-ID.scope", CRI-O "crio-ID.scope", Docker "docker-ID.scope"
// or "/docker/ID", Podman "libpod-ID.scope"). Read gives:
//
//	| attribute          | from                                                      |
//	|--------------------|-----------------------------------------------------------|
//	| k8s.pod.uid        | the "pod<UID>" cgroup (systemd: "_" stands for "-")       |
//	| container.id       | the 64-hex-digit container cgroup                         |
//	| k8s.pod.name       | only for the reader's own pod: K8S_POD_NAME of the agent  |
//	| k8s.namespace.name | only for the reader's own pod: K8S_NAMESPACE_NAME         |
//
// Pod name and namespace of other pods are not in /proc: the cgroup path
// has the UID only. /proc/PID/environ holds HOSTNAME (the pod name unless
// the pod sets hostname or uses the host network) but no namespace, and
// reading it copies every secret in the target's environment into the
// agent, so it is not read. The UID is the join key instead: a
// kube-state-metrics series kube_pod_info{uid=...} gives the name,
// namespace and owner, and the collector's k8s attributes processor adds
// them to telemetry whose resource names the pod. For the agent's own pod
// (a sidecar), the downward API environment variables K8S_POD_UID,
// K8S_POD_NAME and K8S_NAMESPACE_NAME (set by ortel's Helm chart) give
// name and namespace when their UID matches.
//
// A process outside any container (cgroup "/", a systemd service, or a
// reader in another cgroup namespace that sees "/") gets no attributes.
// The attributes are constant for a process's life: read them once.
package podattr
