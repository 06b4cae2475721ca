//go:build linux

package process

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// TestPodAttribution: a process in a pod carries its pod UID and container
// ID on every point (pid 100: cgroup v2, systemd, containerd; pid 200:
// cgroup v1, cgroupfs); name and namespace only for the agent's own pod,
// from its downward-API environment.
func TestPodAttribution(t *testing.T) {
	const (
		uid100 = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
		cid100 = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f801"
		uid200 = "0b8e1a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b"
		cid200 = "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d"
	)
	t.Setenv("K8S_POD_UID", uid200)
	t.Setenv("K8S_POD_NAME", "infer-0")
	t.Setenv("K8S_NAMESPACE_NAME", "ml")
	_, collect := newTest(t, WithRoot("testdata/pods"), WithPIDs(100, 200), WithAllMetrics())
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]attribute.Set{
		100: attribute.NewSet(semconv.K8sPodUid(uid100), semconv.ContainerID(cid100)),
		200: attribute.NewSet(semconv.K8sPodUid(uid200), semconv.ContainerID(cid200),
			semconv.K8sPodName("infer-0"), semconv.K8sNamespaceName("ml")),
	}
	points := 0
	check := func(metric string, s attribute.Set) {
		points++
		pid, _ := s.Value(semconv.ProcessPIDKey)
		w := want[pid.AsInt64()]
		for _, kv := range w.ToSlice() {
			if v, ok := s.Value(kv.Key); !ok || v != kv.Value {
				t.Errorf("%s pid %d: %s = %v, want %v", metric, pid.AsInt64(), kv.Key, v.String(), kv.Value.String())
			}
		}
		for _, k := range []attribute.Key{semconv.K8sPodNameKey, semconv.K8sNamespaceNameKey} {
			if _, ok := s.Value(k); ok && !w.HasValue(k) {
				t.Errorf("%s pid %d carries %s of another pod", metric, pid.AsInt64(), k)
			}
		}
	}
	for name, m := range got {
		for _, s := range procfstest.PointAttributes(m) {
			check(name, s)
		}
	}
	if points == 0 {
		t.Fatal("no points collected")
	}
}

// TestWatchReadsPodAttributes: a process added by Watch carries its pod
// and container as one given to New does.
func TestWatchReadsPodAttributes(t *testing.T) {
	r, collect := newTest(t, WithRoot("testdata/pods"), WithoutSelf())
	if err := r.Watch(100); err != nil {
		t.Fatal(err)
	}
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	pts := got[semconv.ProcessThreadCountName].Data.(metricdata.Sum[int64]).DataPoints
	if len(pts) != 1 {
		t.Fatalf("%d thread-count points, want 1", len(pts))
	}
	for _, kv := range []attribute.KeyValue{
		semconv.K8sPodUid("7c9e6679-7425-40de-944b-e07fc1f90ae7"),
		semconv.ContainerID("3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f801"),
	} {
		if v, ok := pts[0].Attributes.Value(kv.Key); !ok || v != kv.Value {
			t.Errorf("%s = %v, want %v", kv.Key, v.String(), kv.Value.String())
		}
	}
}
