package profile

import (
	"strconv"
	"strings"
)

// Event is one trace event of an ONNX Runtime profile.
//
// Strings are safe to keep. Slices (InputShapes, OutputShapes,
// Threads.SubThreads and each TypeShape's Dims) and the *Event itself are
// reused by the Reader and stay valid only until the next call to Next; call
// Clone to keep one.
type Event struct {
	Category string // "Session", "Node", ... (the "cat" key)
	Name     string // "model_run", "<node>_kernel_time", ...
	Phase    string // "X" for complete events (the "ph" key)
	PID, TID int64
	TS, Dur  int64 // µs since profiling start

	// Node-event args (zero values when absent).
	OpName    string // "Conv", "Add", ...
	Provider  string // "CPUExecutionProvider", ...
	NodeIndex int64  // -1 when absent

	// Sizes in bytes, -1 when absent.
	ActivationSize, ParameterSize, OutputSize int64

	InputShapes, OutputShapes []TypeShape
	Threads                   ThreadStats // zero value when absent (Threads.Present false)

	// Memory holds the allocator readings ONNX Runtime 1.25 and later
	// write per node (the mem_* args); zero value when absent.
	Memory Memory
}

// MaxMicros bounds an event's ts, dur and their sum, in microseconds: 100
// years. Beyond it a time is not one a profile can hold (a non-finite
// number reads as the largest int64), and converted to nanoseconds since
// the epoch it would overflow.
const MaxMicros = 36525 * 24 * 3600 * 1_000_000

// badTimes says why e's times are impossible — a negative, non-finite or
// out-of-range ts or dur — or "" when they are not.
func (e *Event) badTimes() string {
	what := func(key string, v int64) string {
		return "event " + strconv.Quote(e.Name) + ": " + key + " " + strconv.FormatInt(v, 10) +
			" is not a time a profile holds (negative, not finite, or past 100 years in microseconds): the event is skipped"
	}
	switch {
	case e.TS < 0 || e.TS > MaxMicros:
		return what("ts", e.TS)
	case e.Dur < 0 || e.Dur > MaxMicros:
		return what("dur", e.Dur)
	case e.TS+e.Dur > MaxMicros:
		return what("ts+dur", e.TS+e.Dur)
	}
	return ""
}

// Memory is what the session's allocator reported around one node, in
// bytes: ONNX Runtime 1.25 and later write these as the node event's mem_*
// args. A delta is the change the node caused; it may be negative.
type Memory struct {
	Present bool // the event carried at least one mem_* arg

	ArenaHeld      int64 // mem_arena_held: bytes the arena holds from the system after the node
	ArenaHeldDelta int64 // mem_arena_held_delta: how much the node grew (or shrank) the arena

	BytesInUse int64 // mem_bytes_in_use: bytes handed out to tensors after the node
	InUseDelta int64 // mem_in_use_delta
	InUsePeak  int64 // mem_in_use_peak: the highest bytes in use so far

	RequestedInUse      int64 // mem_bytes_requested_in_use: bytes asked for (before rounding)
	RequestedInUseDelta int64 // mem_requested_in_use_delta
}

// TypeShape is the element type and shape of one node input or output, as
// in {"float":[1,3,640,640]}.
type TypeShape struct {
	Type string  // "float", "int64", ...
	Dims []int64 // may be empty for a scalar
}

// String returns the type and shape in the form "float[1,3,640,640]".
func (ts TypeShape) String() string {
	b := make([]byte, 0, len(ts.Type)+2+4*len(ts.Dims))
	return string(ts.AppendTo(b))
}

// AppendTo appends the form "float[1,3,640,640]" to b and returns it.
func (ts TypeShape) AppendTo(b []byte) []byte {
	b = append(b, ts.Type...)
	b = append(b, '[')
	for i, d := range ts.Dims {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return append(b, ']')
}

// ThreadStats holds a node's "thread_scheduling_stats": how the intra-op
// thread pool ran the kernel.
type ThreadStats struct {
	Present  bool   // the event carried thread_scheduling_stats
	PoolName string // main thread's thread_pool_name, e.g. "session-1-intra-op"

	BlockSizes int // len(block_size): how many parallel sections the kernel ran

	// Main-thread counters, µs.
	Distribution, DistributionEnqueue, Run, Wait, WaitRevoke int64

	SubThreads []SubThread
}

// SubThread is one helper thread of the pool that took part in a kernel.
type SubThread struct {
	ID     string // the thread id as ORT prints it
	NumRun int64  // how many work items it ran
	Core   int64  // CPU core it last ran on, -1 when absent
}

// Suffixes ORT appends to node names in Node events.
const (
	kernelSuffix      = "_kernel_time"
	fenceBeforeSuffix = "_fence_before"
	fenceAfterSuffix  = "_fence_after"
)

// IsKernel reports whether e times one node's kernel: category "Node" and a
// name ending in "_kernel_time".
func (e *Event) IsKernel() bool {
	return e.Category == "Node" && strings.HasSuffix(e.Name, kernelSuffix)
}

// NodeName returns the graph node's name: for Node events, Name without the
// "_kernel_time" (or "_fence_before", "_fence_after") suffix; otherwise Name.
func (e *Event) NodeName() string {
	if e.Category != "Node" {
		return e.Name
	}
	for _, s := range [...]string{kernelSuffix, fenceBeforeSuffix, fenceAfterSuffix} {
		if n, ok := strings.CutSuffix(e.Name, s); ok {
			return n
		}
	}
	return e.Name
}

// Clone returns a deep copy of e that shares no memory with the Reader.
func (e *Event) Clone() Event {
	c := *e
	c.InputShapes = cloneShapes(e.InputShapes)
	c.OutputShapes = cloneShapes(e.OutputShapes)
	if e.Threads.SubThreads != nil {
		c.Threads.SubThreads = append([]SubThread(nil), e.Threads.SubThreads...)
	}
	return c
}

func cloneShapes(s []TypeShape) []TypeShape {
	if s == nil {
		return nil
	}
	out := make([]TypeShape, len(s))
	for i, ts := range s {
		out[i] = TypeShape{Type: ts.Type, Dims: append([]int64(nil), ts.Dims...)}
	}
	return out
}

// CopyTo makes dst a deep copy of e, reusing the capacity of dst's slices,
// so that keeping many events costs no allocation once dst has grown.
func (e *Event) CopyTo(dst *Event) {
	in, out, sub := dst.InputShapes, dst.OutputShapes, dst.Threads.SubThreads
	*dst = *e
	dst.InputShapes = copyShapes(in[:0], e.InputShapes)
	dst.OutputShapes = copyShapes(out[:0], e.OutputShapes)
	dst.Threads.SubThreads = append(sub[:0], e.Threads.SubThreads...)
}

func copyShapes(dst, src []TypeShape) []TypeShape {
	for _, ts := range src {
		d := addShape(&dst)
		d.Type = ts.Type
		d.Dims = append(d.Dims, ts.Dims...)
	}
	return dst
}

// reset sets e to the state of an event with no keys, keeping the capacity
// of its slices for reuse.
func (e *Event) reset() {
	in, out, sub := e.InputShapes[:0], e.OutputShapes[:0], e.Threads.SubThreads[:0]
	*e = Event{
		NodeIndex:      -1,
		ActivationSize: -1,
		ParameterSize:  -1,
		OutputSize:     -1,
		InputShapes:    in,
		OutputShapes:   out,
	}
	e.Threads.SubThreads = sub
}

// addShape appends an empty TypeShape to *s, reusing a previous element's
// Dims capacity, and returns it.
func addShape(s *[]TypeShape) *TypeShape {
	n := len(*s)
	if n < cap(*s) {
		*s = (*s)[:n+1]
		ts := &(*s)[n]
		ts.Type, ts.Dims = "", ts.Dims[:0]
		return ts
	}
	*s = append(*s, TypeShape{})
	return &(*s)[n]
}
