package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/semconv"
)

// Shape is what one simulated node runs: its logical CPUs (the cpu
// receiver reports each), the inference pods the agent discovers on it
// (one process each), and the runs per second of each pod that become run
// metrics and sampled run spans.
type Shape struct {
	CPUs        int
	Pods        int
	SpansPerSec float64 // sampled run spans per second, per node
	RunsPerSec  float64 // runs per second, per pod (counted in the run metrics)
	// NoInstanceID leaves service.instance.id off the agents' resource, as
	// the chart did before it set it: every node then writes the same
	// series at the gateway's Prometheus exporter.
	NoInstanceID bool
}

// attachScope is the instrumentation scope of the run metrics `ortel
// attach` (and the agent's attach, when on) records.
const attachScope = "github.com/ortel-dev/ortel/internal/attach"

// modelName is the model the simulated pods run (a short model).
const modelName = "silero_vad"

// LoadTemplate reads the last export of a real `ortel agent` run's
// metrics.jsonl: the agent's resource, scopes, metrics and attribute sets.
func LoadTemplate(path string) (*colmetricspb.ExportMetricsServiceRequest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("agent metrics template: %w", err)
	}
	defer f.Close()
	var last *colmetricspb.ExportMetricsServiceRequest
	if err := otlpjson.ReadMetrics(f, func(r *colmetricspb.ExportMetricsServiceRequest) error { last = r; return nil }); err != nil {
		return nil, fmt.Errorf("agent metrics template %q: %w", path, err)
	}
	if last == nil || len(last.ResourceMetrics) != 1 {
		return nil, fmt.Errorf("agent metrics template %q: want exports of one resource (an ortel agent's metrics.jsonl)", path)
	}
	return last, nil
}

// Node is one simulated node's agent: its metrics export, updated in
// place before each send, and the resource of its spans.
type Node struct {
	ID       int
	Metrics  *colmetricspb.ExportMetricsServiceRequest
	resource *resourcepb.Resource
	pods     []podIdentity
	rng      *rand.Rand
	start    uint64
	runs     float64 // runs so far, per pod
	exports  int
}

type podIdentity struct {
	pid               int64
	uid, containerID  string
	sessionID         string
	processAttributes []*commonpb.KeyValue
}

// NewNode builds node id's export from the template: the agent's own
// resource with this node's identity (service.instance.id and k8s.node.name
// are the node's name, as the Helm chart sets them), every cpu.logical_number
// reading repeated for shape.CPUs CPUs, the process readings once per
// inference pod (with the pod's k8s.pod.uid and container.id, as discovery
// attributes them) instead of the agent's own, and the run metrics of each
// pod. start is the process start time of every cumulative point.
func NewNode(tmpl *colmetricspb.ExportMetricsServiceRequest, id int, shape Shape, start uint64) (*Node, error) {
	req := proto.Clone(tmpl).(*colmetricspb.ExportMetricsServiceRequest)
	rm := req.ResourceMetrics[0]
	name := fmt.Sprintf("node-%05d", id)
	n := &Node{ID: id, Metrics: req, rng: rand.New(rand.NewPCG(uint64(id), 42)), start: start}
	identity := map[string]string{
		"service.instance.id": name,
		"k8s.node.name":       name,
		"host.name":           name,
		"k8s.pod.name":        "ortel-agent-" + hash(name)[:5],
		"k8s.pod.uid":         uuidOf("agent", id, 0),
	}
	if shape.NoInstanceID {
		delete(identity, "service.instance.id")
	}
	setAttrs(&rm.Resource.Attributes, identity)
	n.resource = rm.Resource
	for j := range shape.Pods {
		pid := int64(1000 + j)
		p := podIdentity{pid: pid, uid: uuidOf("pod", id, j), containerID: hash(fmt.Sprintf("container %d %d", id, j)), sessionID: fmt.Sprintf("%d:0x%x", pid, 0x55d0c0de0000+j*0x1000)}
		p.processAttributes = []*commonpb.KeyValue{
			intKV("process.pid", pid), strKV("process.executable.name", "node"), strKV("process.runtime.name", "nodejs"),
			strKV("k8s.pod.uid", p.uid), strKV("container.id", p.containerID),
		}
		n.pods = append(n.pods, p)
	}
	var found bool
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch {
			case sm.Scope.GetName() == "github.com/ortel-dev/ortel/receivers/process":
				found = true
				expandPods(m, n.pods)
			case hasAttr(m, "cpu.logical_number"):
				expandCPUs(m, shape.CPUs)
			case m.Name == "system.cpu.logical.count":
				setIntValue(m, int64(shape.CPUs))
			}
		}
	}
	if !found && shape.Pods > 0 {
		return nil, fmt.Errorf("the agent metrics template has no process readings to give the pods")
	}
	if shape.Pods > 0 {
		rm.ScopeMetrics = append(rm.ScopeMetrics, n.runMetrics())
	}
	return n, nil
}

// runMetrics are the run metrics of every pod, as attach records them.
func (n *Node) runMetrics() *metricspb.ScopeMetrics {
	var bounds []float64
	for _, m := range semconv.Metrics {
		if m.Name == "onnxruntime.run.duration" {
			bounds = slices.Clone(m.Buckets)
		}
	}
	hist := &metricspb.Histogram{AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}
	runs := &metricspb.Sum{IsMonotonic: true, AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}
	active := &metricspb.Sum{AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE}
	for _, p := range n.pods {
		attrs := append([]*commonpb.KeyValue{strKV("onnxruntime.model.name", modelName)}, p.processAttributes...)
		hist.DataPoints = append(hist.DataPoints, &metricspb.HistogramDataPoint{
			Attributes:     append(slices.Clone(attrs), boolKV("onnxruntime.run.profiled", false)),
			ExplicitBounds: bounds, BucketCounts: make([]uint64, len(bounds)+1),
		})
		runs.DataPoints = append(runs.DataPoints, &metricspb.NumberDataPoint{Attributes: attrs, Value: &metricspb.NumberDataPoint_AsInt{}})
		active.DataPoints = append(active.DataPoints, &metricspb.NumberDataPoint{Attributes: attrs, Value: &metricspb.NumberDataPoint_AsInt{}})
	}
	return &metricspb.ScopeMetrics{
		Scope: &commonpb.InstrumentationScope{Name: attachScope},
		Metrics: []*metricspb.Metric{
			{Name: "onnxruntime.run.duration", Unit: "s", Data: &metricspb.Metric_Histogram{Histogram: hist}},
			{Name: "onnxruntime.runs", Unit: "{run}", Data: &metricspb.Metric_Sum{Sum: runs}},
			{Name: "onnxruntime.run.active", Unit: "{run}", Data: &metricspb.Metric_Sum{Sum: active}},
		},
	}
}

// Points is the number of data points in one export of the node.
func (n *Node) Points() int { return countPoints(n.Metrics) }

// Tick advances the node's readings to now, elapsed after the previous
// export: cumulative points grow, gauges move, every point is stamped now.
func (n *Node) Tick(now uint64, elapsed float64, shape Shape) {
	n.exports++
	newRuns := shape.RunsPerSec * elapsed
	n.runs += newRuns
	for _, sm := range n.Metrics.ResourceMetrics[0].ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case *metricspb.Metric_Sum:
				for _, p := range d.Sum.DataPoints {
					p.StartTimeUnixNano, p.TimeUnixNano = n.start, now
					switch m.Name {
					case "onnxruntime.runs":
						p.Value = &metricspb.NumberDataPoint_AsInt{AsInt: int64(n.runs)}
					case "onnxruntime.run.active":
						p.Value = &metricspb.NumberDataPoint_AsInt{AsInt: int64(n.rng.IntN(2))}
					default:
						grow(p, d.Sum.IsMonotonic, n.rng)
					}
				}
			case *metricspb.Metric_Gauge:
				for _, p := range d.Gauge.DataPoints {
					p.StartTimeUnixNano, p.TimeUnixNano = n.start, now
					if v, ok := p.Value.(*metricspb.NumberDataPoint_AsDouble); ok {
						v.AsDouble = n.rng.Float64()
					}
				}
			case *metricspb.Metric_Histogram:
				for _, p := range d.Histogram.DataPoints {
					p.StartTimeUnixNano, p.TimeUnixNano = n.start, now
					// Silero VAD: ~100 µs runs, a tail to a few ms.
					k := uint64(newRuns)
					for range k {
						v := 80e-6 + n.rng.ExpFloat64()*40e-6
						i, _ := slices.BinarySearch(p.ExplicitBounds, v)
						p.BucketCounts[i]++
						p.Sum = proto.Float64(p.GetSum() + v)
						p.Count++
					}
				}
			}
		}
	}
}

// grow moves a sum point: a monotonic one up by a little, another by a
// little either way (never below zero).
func grow(p *metricspb.NumberDataPoint, monotonic bool, rng *rand.Rand) {
	switch v := p.Value.(type) {
	case *metricspb.NumberDataPoint_AsDouble:
		step := rng.Float64()
		if !monotonic {
			step -= 0.5
		}
		v.AsDouble = max(0, v.AsDouble+step)
	case *metricspb.NumberDataPoint_AsInt:
		step := rng.Int64N(100)
		if !monotonic {
			step -= 50
		}
		v.AsInt = max(0, v.AsInt+step)
	}
}

// Spans returns count run spans of the node's pods, ended now, as one
// export: the spans attach makes of Runs ("run MODEL" with the model,
// session, process and pod attributes), on the agent's resource.
// rng is the caller's: spans are made on another goroutine than Tick.
func (n *Node) Spans(count int, now uint64, rng *rand.Rand) *coltracepb.ExportTraceServiceRequest {
	spans := make([]*tracepb.Span, 0, count)
	for i := range count {
		p := n.pods[i%len(n.pods)]
		tid := make([]byte, 16)
		sid := make([]byte, 8)
		for j := range tid {
			tid[j] = byte(rng.Uint32())
		}
		for j := range sid {
			sid[j] = byte(rng.Uint32())
		}
		dur := uint64(80_000 + rng.IntN(60_000)) // ns
		end := now - uint64(rng.IntN(1_000_000_000))
		attrs := append([]*commonpb.KeyValue{strKV("onnxruntime.model.name", modelName), strKV("onnxruntime.session.id", p.sessionID)}, p.processAttributes...)
		spans = append(spans, &tracepb.Span{
			TraceId: tid, SpanId: sid, Name: "run " + modelName, Kind: tracepb.Span_SPAN_KIND_INTERNAL,
			StartTimeUnixNano: end - dur, EndTimeUnixNano: end, Attributes: attrs,
		})
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource:   n.resource,
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: attachScope}, Spans: spans}},
	}}}
}

// expandCPUs repeats the points of the template's first CPU for cpus CPUs.
func expandCPUs(m *metricspb.Metric, cpus int) {
	if pts := numberPoints(m); pts != nil {
		*pts = repeatPerCPU(*pts, cpus)
	}
}

func repeatPerCPU(pts []*metricspb.NumberDataPoint, cpus int) []*metricspb.NumberDataPoint {
	var first []*metricspb.NumberDataPoint
	for _, p := range pts {
		if v, ok := attrValue(p.Attributes, "cpu.logical_number"); ok && v.GetIntValue() == 0 {
			first = append(first, p)
		}
	}
	out := make([]*metricspb.NumberDataPoint, 0, len(first)*cpus)
	for c := range cpus {
		for _, p := range first {
			q := proto.Clone(p).(*metricspb.NumberDataPoint)
			setInt(q.Attributes, "cpu.logical_number", int64(c))
			out = append(out, q)
		}
	}
	return out
}

// expandPods replaces a process metric's points (the agent's own process)
// by one set per pod, with the pod's process and pod attributes.
func expandPods(m *metricspb.Metric, pods []podIdentity) {
	withPod := func(attrs []*commonpb.KeyValue, p podIdentity) []*commonpb.KeyValue {
		out := make([]*commonpb.KeyValue, 0, len(attrs)+2)
		for _, a := range attrs {
			if a.Key != "process.pid" {
				out = append(out, a)
			}
		}
		return append(out, intKV("process.pid", p.pid), strKV("k8s.pod.uid", p.uid), strKV("container.id", p.containerID))
	}
	pts := numberPoints(m)
	if pts == nil {
		return
	}
	var out []*metricspb.NumberDataPoint
	for _, p := range pods {
		for _, pt := range *pts {
			q := proto.Clone(pt).(*metricspb.NumberDataPoint)
			q.Attributes = withPod(q.Attributes, p)
			out = append(out, q)
		}
	}
	*pts = out
}

// numberPoints is the address of a sum's or gauge's points; nil for
// another kind of metric.
func numberPoints(m *metricspb.Metric) *[]*metricspb.NumberDataPoint {
	switch d := m.Data.(type) {
	case *metricspb.Metric_Sum:
		return &d.Sum.DataPoints
	case *metricspb.Metric_Gauge:
		return &d.Gauge.DataPoints
	}
	return nil
}

// pointAttributes returns the attributes of each data point of m.
func pointAttributes(m *metricspb.Metric) [][]*commonpb.KeyValue {
	var out [][]*commonpb.KeyValue
	if pts := numberPoints(m); pts != nil {
		for _, p := range *pts {
			out = append(out, p.Attributes)
		}
	}
	if h := m.GetHistogram(); h != nil {
		for _, p := range h.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

func countPoints(req *colmetricspb.ExportMetricsServiceRequest) int {
	n := 0
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case *metricspb.Metric_Sum:
					n += len(d.Sum.DataPoints)
				case *metricspb.Metric_Gauge:
					n += len(d.Gauge.DataPoints)
				case *metricspb.Metric_Histogram:
					n += len(d.Histogram.DataPoints)
				}
			}
		}
	}
	return n
}

func hasAttr(m *metricspb.Metric, key string) bool {
	for _, attrs := range pointAttributes(m) {
		if _, ok := attrValue(attrs, key); ok {
			return true
		}
	}
	return false
}

func setIntValue(m *metricspb.Metric, v int64) {
	if d, ok := m.Data.(*metricspb.Metric_Sum); ok {
		for _, p := range d.Sum.DataPoints {
			p.Value = &metricspb.NumberDataPoint_AsInt{AsInt: v}
		}
	}
}

func attrValue(attrs []*commonpb.KeyValue, key string) (*commonpb.AnyValue, bool) {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return nil, false
}

func setInt(attrs []*commonpb.KeyValue, key string, v int64) {
	for _, a := range attrs {
		if a.Key == key {
			a.Value = &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}
		}
	}
}

// setAttrs sets string attributes, replacing those present.
func setAttrs(attrs *[]*commonpb.KeyValue, kv map[string]string) {
	keys := slices.Sorted(maps.Keys(kv))
	for _, k := range keys {
		i := slices.IndexFunc(*attrs, func(a *commonpb.KeyValue) bool { return a.Key == k })
		if i >= 0 {
			(*attrs)[i] = strKV(k, kv[k])
		} else {
			*attrs = append(*attrs, strKV(k, kv[k]))
		}
	}
}

func strKV(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func intKV(k string, v int64) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v}}}
}

func boolKV(k string, v bool) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
}

func hash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// uuidOf is a stable UUID-shaped id for a simulated object.
func uuidOf(kind string, node, i int) string {
	h := hash(kind + " " + strconv.Itoa(node) + " " + strconv.Itoa(i))
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
