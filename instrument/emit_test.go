package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/instrument/profile"
)

// oneRunProfile is a per-run profile of one run with one Conv node whose
// input shape and allocator reading are given.
func oneRunProfile(t *testing.T, dir string, k int, rows int, inUse int64) string {
	t.Helper()
	js := fmt.Sprintf(`[
{"cat":"Node","pid":1,"tid":1,"dur":40,"ts":110,"ph":"X","name":"conv0_kernel_time","args":{"op_name":"Conv","provider":"CPUExecutionProvider","node_index":"3","activation_size":"%d","parameter_size":"64","output_size":"%d","input_type_shape":[{"float":[1,%d]}],"output_type_shape":[{"float":[1,%d]}],"mem_bytes_in_use":"%d"}},
{"cat":"Node","pid":1,"tid":1,"dur":10,"ts":160,"ph":"X","name":"relu0_kernel_time","args":{"op_name":"Relu","provider":"CPUExecutionProvider","node_index":"4"}},
{"cat":"Session","pid":1,"tid":1,"dur":100,"ts":100,"ph":"X","name":"model_run","args":{}}
]`, 4*rows, 4*rows, rows, rows, inUse)
	path := filepath.Join(dir, fmt.Sprintf("run%d.json", k))
	if err := os.WriteFile(path, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestEmitterCacheFollowsChangingNodes: the emitter caches each node's
// static attributes across profiles; a node whose shapes change (a dynamic
// input) gets its new shapes, and the attributes that change every run
// (allocator readings) are never cached. Every span's attributes equal
// what profile.Event.AppendNodeAttributes and AppendRunAttributes give
// the same event, and the events handed to
// the node observer stay intact after later profiles reuse the buffers.
func TestEmitterCacheFollowsChangingNodes(t *testing.T) {
	p := newProviders(t)
	var kept []ProfiledNode
	c := newCore("", p.opts(WithModelName("m"), WithNodeObserver(func(n ProfiledNode) { kept = append(kept, n) })))
	e := newEmitter(c)
	dir := t.TempDir()
	tr := p.tp.Tracer("test")
	cases := []struct {
		rows  int
		inUse int64
	}{{8, 100}, {8, 200}, {16, 300}, {8, 400}}
	var want [][]attribute.KeyValue
	for k, tc := range cases {
		path := oneRunProfile(t, dir, k, tc.rows, tc.inUse)
		var evs []profile.Event
		if _, err := profile.ReadFile(path, func(ev *profile.Event) error {
			if ev.IsKernel() {
				evs = append(evs, ev.Clone())
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			want = append(want, evs[i].AppendRunAttributes(evs[i].AppendNodeAttributes(slices.Clone(c.baseAttrs))))
		}
		_, run := tr.Start(t.Context(), "run")
		start := time.Now()
		n, err := emitWindow(e, path, start, []profiledRun{{sc: run.SpanContext(), start: start, end: start.Add(time.Millisecond), index: int64(k)}})
		run.End()
		if err != nil || n != 2 {
			t.Fatalf("profile %d: %d spans, %v; want 2", k, n, err)
		}
	}
	var got [][]attribute.KeyValue
	for _, s := range p.spans.Ended() {
		if s.Name() != "run" {
			got = append(got, s.Attributes())
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d operator spans, want %d", len(got), len(want))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("span %d attributes\n got %v\nwant %v", i, got[i], want[i])
		}
	}
	// The observer's events are copies: the first run's Conv still has its
	// own shape and reading.
	if len(kept) != 8 {
		t.Fatalf("observer saw %d nodes, want 8", len(kept))
	}
	for k, tc := range cases {
		n := kept[2*k].Node
		if n.OpName != "Conv" || n.InputShapes[0].Dims[1] != int64(tc.rows) || n.Memory.BytesInUse != tc.inUse {
			t.Errorf("run %d: observer kept %s %v in use %d, want Conv rows %d in use %d",
				k, n.OpName, n.InputShapes, n.Memory.BytesInUse, tc.rows, tc.inUse)
		}
		if !kept[2*k].RunSpan.IsValid() {
			t.Errorf("run %d: no run span", k)
		}
	}
}
