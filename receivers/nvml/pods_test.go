//go:build linux && cgo

package nvml

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/semconv"
)

// podRoot copies testdata/pods, a host root whose /proc holds the cgroup
// files of the scripted GPU processes: pid 999999 in a containerd pod
// (cgroup v2, systemd driver), pid 888888 in a CRI-O pod; pid 777777 and
// this process have none (exited before they were read, or unreadable).
// testdata/pods-reused gives pid 999999 to a third pod (Docker, cgroup v1).
func podRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, pid := range []string{"999999", "888888"} {
		copyCgroup(t, filepath.Join("testdata/pods/proc", pid, "cgroup"), root, pid)
	}
	return root
}

func copyCgroup(t *testing.T, from, root, pid string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "proc", pid)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The pods of the fixtures, as their cgroup paths name them.
var (
	containerdPod = []attribute.KeyValue{semconv.K8sPodUid("1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d"), semconv.ContainerID("aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233")}
	crioPod       = []attribute.KeyValue{semconv.K8sPodUid("9f8e7d6c-5b4a-4321-8fed-cba987654321"), semconv.ContainerID("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")}
	dockerPod     = []attribute.KeyValue{semconv.K8sPodUid("5a5a5a5a-6b6b-4c7c-8d8d-9e9e9e9e9e9e"), semconv.ContainerID("fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210")}
)

// TestPerPodAttribution: with WithAllProcesses, every process on the GPU
// is reported, each with its pod from /proc/PID/cgroup (the two fixture
// pods), a process whose cgroup is unreadable with its pid alone; without
// it, only this process, with its pid alone, as before.
func TestPerPodAttribution(t *testing.T) {
	root := podRoot(t)
	self := os.Getpid()
	dev := newH100(&gpuScript{})
	dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{
			{Pid: uint32(self), UsedGpuMemory: 2 << 30},
			{Pid: otherPID, UsedGpuMemory: 10 << 30},
			{Pid: 888888, UsedGpuMemory: 3 << 30},
			{Pid: 777777, UsedGpuMemory: 1 << 30},
		}, nvml.SUCCESS
	}
	dev.GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return []nvml.ProcessUtilizationSample{
			{Pid: uint32(self), TimeStamp: last + 10, SmUtil: 60},
			{Pid: otherPID, TimeStamp: last + 20, SmUtil: 30, EncUtil: 4},
			{Pid: 777777, TimeStamp: last + 20, SmUtil: 5},
		}, nvml.SUCCESS
	}
	procKey := func(pid int, pod []attribute.KeyValue, kv ...attribute.KeyValue) string {
		return key(append(append([]attribute.KeyValue{h100.id(), semconv.ProcessPID(pid)}, pod...), kv...)...)
	}
	general := semconv.HwGPUTaskGeneral
	cases := []struct {
		name   string
		opts   []Option
		memory map[string]float64
		util   map[string]float64 // general task only
	}{
		{
			name: "every process, with its pod",
			opts: []Option{WithAllProcesses(), WithRoot(root)},
			memory: map[string]float64{
				procKey(self, nil):               2 << 30, // not in a pod (no cgroup file in the fixture root)
				procKey(otherPID, containerdPod): 10 << 30,
				procKey(888888, crioPod):         3 << 30,
				procKey(777777, nil):             1 << 30,
			},
			util: map[string]float64{
				procKey(self, nil, general):               0.6,
				procKey(otherPID, containerdPod, general): 0.3,
				procKey(888888, crioPod, general):         0, // running, no sample: 0
				procKey(777777, nil, general):             0.05,
			},
		},
		{
			name:   "default: this process only",
			opts:   nil,
			memory: map[string]float64{procKey(self, nil): 2 << 30},
			util:   map[string]float64{procKey(self, nil, general): 0.6},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := start(t, newMachine(dev), c.opts...)
			h.ready()
			got, err := h.collect()
			if err != nil {
				t.Fatal(err)
			}
			mem := got[semconv.NvidiaGPUProcessMemoryUsageName]
			if len(mem) != len(c.memory) {
				t.Errorf("memory points %v, want %v", mem, c.memory)
			}
			for k, v := range c.memory {
				if mem[k] != v {
					t.Errorf("memory of %s = %v, want %v (have %v)", k, mem[k], v, mem)
				}
			}
			util := got[semconv.NvidiaGPUProcessUtilizationName]
			if len(util) != 3*len(c.util) {
				t.Errorf("%d utilization points, want 3 tasks for each of %d processes: %v", len(util), len(c.util), util)
			}
			for k, v := range c.util {
				if u, ok := util[k]; !ok || u != v {
					t.Errorf("utilization of %s = %v (%v), want %v", k, u, ok, v)
				}
			}
		})
	}
}

// TestPerPodAttributionForgetsExited: a process that left the GPU has no
// point in the next collection, and a pid reused by another pod is read
// again, with the new pod.
func TestPerPodAttributionForgetsExited(t *testing.T) {
	root := podRoot(t)
	var off atomic.Bool // read by the reading goroutine
	dev := newH100(&gpuScript{})
	dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		if off.Load() {
			return nil, nvml.SUCCESS
		}
		return []nvml.ProcessInfo{{Pid: otherPID, UsedGpuMemory: 1 << 30}}, nvml.SUCCESS
	}
	dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, nvml.ERROR_NOT_FOUND }
	h := start(t, newMachine(dev), WithAllProcesses(), WithRoot(root))
	h.ready()
	point := func() string {
		got, err := h.collect()
		if err != nil {
			t.Fatal(err)
		}
		for k := range got[semconv.NvidiaGPUProcessMemoryUsageName] {
			return k
		}
		return ""
	}
	pointOf := func(pod []attribute.KeyValue) string {
		return key(append([]attribute.KeyValue{h100.id(), semconv.ProcessPID(otherPID)}, pod...)...)
	}
	if got := point(); got != pointOf(containerdPod) {
		t.Fatalf("point %s, want %s", got, pointOf(containerdPod))
	}
	off.Store(true)
	if got := point(); got != "" {
		t.Fatalf("a point %s after the process left the GPU", got)
	}
	// The pid comes back in another pod.
	copyCgroup(t, "testdata/pods-reused/proc/999999/cgroup", root, strconv.Itoa(otherPID))
	off.Store(false)
	if got := point(); got != pointOf(dockerPod) {
		t.Errorf("the reused pid: point %s, want its new pod %s", got, pointOf(dockerPod))
	}
}
