package profile

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/semconv"
)

// AppendNodeAttributes appends to dst the span attributes, in ortel's
// conventions (semconv), of the node a kernel event times that stay the same
// from run to run while its shapes do: node name, op type, execution
// provider, node index, input and output shapes, tensor sizes. Absent fields
// are left out. ortel's live operator spans and `ortel import` both build
// their attributes with it and AppendRunAttributes.
func (e *Event) AppendNodeAttributes(dst []attribute.KeyValue) []attribute.KeyValue {
	attrs := append(dst,
		semconv.OnnxruntimeNodeNameKey.String(e.NodeName()),
		semconv.OnnxruntimeNodeOpTypeKey.String(e.OpName),
		semconv.OnnxruntimeExecutionProviderKey.String(e.Provider),
	)
	if e.NodeIndex >= 0 {
		attrs = append(attrs, semconv.OnnxruntimeNodeIndexKey.Int64(e.NodeIndex))
	}
	if len(e.InputShapes) > 0 {
		attrs = append(attrs, semconv.OnnxruntimeNodeInputTypeShapesKey.StringSlice(shapeStrings(e.InputShapes)))
	}
	if len(e.OutputShapes) > 0 {
		attrs = append(attrs, semconv.OnnxruntimeNodeOutputTypeShapesKey.StringSlice(shapeStrings(e.OutputShapes)))
	}
	for _, sz := range [...]struct {
		key attribute.Key
		v   int64
	}{
		{semconv.OnnxruntimeNodeActivationSizeKey, e.ActivationSize},
		{semconv.OnnxruntimeNodeParameterSizeKey, e.ParameterSize},
		{semconv.OnnxruntimeNodeOutputSizeKey, e.OutputSize},
	} {
		if sz.v >= 0 {
			attrs = append(attrs, sz.key.Int64(sz.v))
		}
	}
	return attrs
}

// AppendRunAttributes appends to dst the span attributes of this run of the
// node that change from run to run: how the intra-op threads shared the
// work (ThreadSummary) and, from ONNX Runtime 1.25 on, the allocator
// readings. Absent readings are left out.
func (e *Event) AppendRunAttributes(dst []attribute.KeyValue) []attribute.KeyValue {
	attrs := dst
	if t := e.ThreadSummary(); t.Threads > 0 {
		attrs = append(attrs,
			semconv.OnnxruntimeNodeThreadsCountKey.Int(t.Threads),
			semconv.OnnxruntimeNodeThreadsSubRunsKey.Int64(t.SubRuns),
			semconv.OnnxruntimeNodeThreadsMainRunRatioKey.Float64(t.MainRunRatio),
		)
		if t.Imbalance > 0 {
			attrs = append(attrs, semconv.OnnxruntimeNodeThreadsImbalanceKey.Float64(t.Imbalance))
		}
	}
	if m := &e.Memory; m.Present {
		attrs = append(attrs,
			semconv.OnnxruntimeNodeMemoryArenaHeldKey.Int64(m.ArenaHeld),
			semconv.OnnxruntimeNodeMemoryArenaHeldDeltaKey.Int64(m.ArenaHeldDelta),
			semconv.OnnxruntimeNodeMemoryInUseKey.Int64(m.BytesInUse),
			semconv.OnnxruntimeNodeMemoryInUseDeltaKey.Int64(m.InUseDelta),
			semconv.OnnxruntimeNodeMemoryInUsePeakKey.Int64(m.InUsePeak),
		)
	}
	return attrs
}

func shapeStrings(ts []TypeShape) []string {
	out := make([]string, len(ts))
	for i, s := range ts {
		out[i] = s.String()
	}
	return out
}

// ThreadSummary condenses a node's thread_scheduling_stats.
type ThreadSummary struct {
	// Threads is 1 (the calling thread) plus the sub-threads that ran work;
	// 0 when the profile holds no thread statistics.
	Threads int
	// SubRuns is the number of work items the sub-threads ran.
	SubRuns int64
	// MainRunRatio is the share of the node's time the calling thread spent
	// running work itself.
	MainRunRatio float64
	// Imbalance is max/mean of the sub-threads' work items: 1 is perfectly
	// even, higher means some threads did most of the work. 0 without
	// sub-threads.
	Imbalance float64
}

// ThreadSummary condenses the thread statistics of the event (ONNX
// Runtime writes them on some CPUs only: the zero ThreadSummary without).
func (e *Event) ThreadSummary() ThreadSummary {
	st := &e.Threads
	if !st.Present {
		return ThreadSummary{}
	}
	s := ThreadSummary{Threads: 1}
	var maxRun int64
	active := 0
	for _, t := range st.SubThreads {
		if t.NumRun > 0 {
			active++
			s.SubRuns += t.NumRun
			maxRun = max(maxRun, t.NumRun)
		}
	}
	s.Threads += active
	if e.Dur > 0 {
		s.MainRunRatio = min(float64(st.Run)/float64(e.Dur), 1)
	}
	if active > 0 {
		mean := float64(s.SubRuns) / float64(active)
		s.Imbalance = float64(maxRun) / mean
	}
	return s
}
