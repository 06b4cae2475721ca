package instrument

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument/profile"
)

// maxNodeCache bounds the per-node cache of an emitter: a model has at most
// a few thousand nodes; a cache that outgrows this (names that never repeat)
// is dropped and rebuilt.
const maxNodeCache = 1 << 14

// emitter turns profiles into operator spans, keeping between profiles what
// does not change from one run of a session to the next: one Reader (and
// the strings it interned), the buffers events are copied into, and for
// each node its span name, its static attributes (name, op type, provider,
// index, shapes, sizes) and its metric attribute set. A profiled run then
// costs, on ortel's side, the parse of its profile and one span and one
// Record per operator; nothing is formatted again. Measured on Silero VAD
// (57 operator spans a run): see BenchmarkProfiledRunVAD.
//
// An emitter is not safe for concurrent use: the profiler reads one profile
// at a time.
type emitter struct {
	c     *core
	rd    *profile.Reader
	g     *profile.Grouper
	nodes map[string]*nodeInfo // by event name ("<node>_kernel_time"), interned by rd

	kern  []int
	ctxs  []context.Context
	attrs []attribute.KeyValue
	opts  []trace.SpanStartOption
}

// nodeInfo is what an emitter keeps of one node between runs. The event it
// was built from is kept (deep copy) to tell when a node's static fields
// changed (a dynamic input shape): then it is rebuilt.
type nodeInfo struct {
	ev    profile.Event
	name  string               // the span name
	attrs []attribute.KeyValue // session attributes + static node attributes, clipped
	rec   metric.MeasurementOption
}

func newEmitter(c *core) *emitter {
	return &emitter{c: c, rd: profile.NewReader(nil), g: profile.NewGrouper(), nodes: make(map[string]*nodeInfo)}
}

// read reads the profile at path with the emitter's Reader and calls fn
// with each event, in file order (see profile.ReadFile).
func (e *emitter) read(path string, fn func(*profile.Event) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read profile %q: %w", path, err)
	}
	defer f.Close()
	e.rd.Reset(f)
	defer e.rd.Reset(nil)
	for {
		ev, err := e.rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read profile %q: %w", path, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

var spanKindInternal = trace.WithSpanKind(trace.SpanKindInternal)

// node returns the cached description of n's node, building it when the
// node is new or its static fields changed.
func (e *emitter) node(n *profile.Event) *nodeInfo {
	if info, ok := e.nodes[n.Name]; ok && sameStatic(&info.ev, n) {
		return info
	}
	if len(e.nodes) >= maxNodeCache {
		clear(e.nodes)
	}
	info := &nodeInfo{ev: n.Clone()}
	info.ev.Threads, info.ev.Memory = profile.ThreadStats{}, profile.Memory{}
	info.name = n.OpName
	if info.name == "" {
		info.name = n.NodeName()
	}
	attrs := make([]attribute.KeyValue, 0, len(e.c.baseAttrs)+10)
	attrs = append(attrs, e.c.baseAttrs...)
	info.attrs = slices.Clip(n.AppendNodeAttributes(attrs))
	info.rec = e.c.nodeMetricAttrs(n.OpName, n.Provider)
	e.nodes[n.Name] = info
	return info
}

// sameStatic reports whether a and b agree on everything a node's static
// attributes are made of.
func sameStatic(a, b *profile.Event) bool {
	return a.OpName == b.OpName && a.Provider == b.Provider && a.NodeIndex == b.NodeIndex &&
		a.ActivationSize == b.ActivationSize && a.ParameterSize == b.ParameterSize && a.OutputSize == b.OutputSize &&
		sameShapes(a.InputShapes, b.InputShapes) && sameShapes(a.OutputShapes, b.OutputShapes)
}

func sameShapes(a, b []profile.TypeShape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || !slices.Equal(a[i].Dims, b[i].Dims) {
			return false
		}
	}
	return true
}

// emitRun emits the operators of one run as children of its span; the
// nodes of a subgraph become children of the node that ran it. grp is
// valid only during the call (its events live in the grouper's buffers).
func (e *emitter) emitRun(r profiledRun, grp *profile.Run) int {
	c := e.c
	pl := place(r, &grp.Run)
	runCtx := trace.ContextWithSpanContext(context.Background(), r.sc)
	nodes, nest := grp.Events, grp.Placements
	// Parents before children: by depth, then in time order.
	order := e.kern[:0]
	for i := range nodes {
		if nodes[i].IsKernel() {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(nest[a].Depth, nest[b].Depth); c != 0 {
			return c
		}
		return cmp.Compare(nodes[a].TS, nodes[b].TS)
	})
	e.kern = order
	// A node's context is kept only when a subgraph node needs it as parent.
	ctxs := e.ctxs[:0]
	for range nodes {
		ctxs = append(ctxs, nil)
	}
	hasChild := false
	for _, i := range order {
		if nest[i].Parent >= 0 {
			hasChild = true
			break
		}
	}
	tr := c.emitTracer() // once per run: a provider shut down answers a no-op tracer
	observer := c.cfg.nodeObserver
	for _, i := range order {
		n := &nodes[i]
		info := e.node(n)
		parent := runCtx
		if p := nest[i].Parent; p >= 0 && ctxs[p] != nil {
			parent = ctxs[p]
		}
		s, end := pl.interval(n)
		self := time.Duration(nest[i].Self) * time.Microsecond
		attrs := n.AppendRunAttributes(append(e.attrs[:0], info.attrs...))
		opts := append(e.opts[:0], trace.WithTimestamp(s), spanKindInternal, trace.WithAttributes(attrs...))
		ctx, span := tr.Start(parent, info.name, opts...)
		e.attrs, e.opts = attrs, opts
		if !span.IsRecording() && trace.SpanContextFromContext(parent).IsSampled() {
			c.lostSpan()
		}
		span.End(trace.WithTimestamp(end))
		c.inst.nodeDuration.Record(parent, self.Seconds(), info.rec)
		if hasChild {
			ctxs[i] = ctx
		}
		if observer != nil {
			observer(ProfiledNode{Run: r.index, RunSpan: r.sc, Start: s, End: end, Node: n.Clone(), Self: self, Depth: nest[i].Depth})
		}
	}
	clear(ctxs)
	e.ctxs = ctxs
	return len(order)
}
