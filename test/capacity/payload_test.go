package main

import (
	"math/rand/v2"
	"slices"
	"testing"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// The template is the last export of a real `ortel agent --interval 1s`
// run on this project's build machine (2 CPUs, no GPU), with the chart's
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
const templateFile = "testdata/agent-metrics.jsonl"

func metricsByName(n *Node) map[string]*metricspb.Metric {
	out := map[string]*metricspb.Metric{}
	for _, sm := range n.Metrics.ResourceMetrics[0].ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func resourceAttr(n *Node, key string) string {
	v, _ := attrValue(n.Metrics.ResourceMetrics[0].Resource.Attributes, key)
	return v.GetStringValue()
}

// TestNewNode: a node's export is the agent's, widened to its CPUs and
// pods, with its own identity.
func TestNewNode(t *testing.T) {
	tmpl, err := LoadTemplate(templateFile)
	if err != nil {
		t.Fatal(err)
	}
	shape := Shape{CPUs: 8, Pods: 3, RunsPerSec: 10}
	n, err := NewNode(tmpl, 3, shape, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := resourceAttr(n, "service.instance.id"); got != "node-00003" || resourceAttr(n, "k8s.node.name") != got {
		t.Errorf("resource service.instance.id %q, k8s.node.name %q: want the node's name in both", got, resourceAttr(n, "k8s.node.name"))
	}
	ms := metricsByName(n)
	cpus := map[int64]int{}
	for _, attrs := range pointAttributes(ms["system.cpu.time"]) {
		v, _ := attrValue(attrs, "cpu.logical_number")
		cpus[v.GetIntValue()]++
	}
	if len(cpus) != 8 || cpus[0] != cpus[7] || cpus[0] == 0 {
		t.Errorf("system.cpu.time points per CPU %v: want 8 CPUs with the template's modes each", cpus)
	}
	pods := map[string]bool{}
	for _, attrs := range pointAttributes(ms["process.memory.usage"]) {
		uid, ok := attrValue(attrs, "k8s.pod.uid")
		_, cid := attrValue(attrs, "container.id")
		pid, _ := attrValue(attrs, "process.pid")
		if !ok || !cid || pid.GetIntValue() < 1000 {
			t.Errorf("process.memory.usage point %v: want a pod's pid, k8s.pod.uid and container.id", attrs)
		}
		pods[uid.GetStringValue()] = true
	}
	if len(pods) != 3 {
		t.Errorf("process points of %d pods, want 3", len(pods))
	}
	h := ms["onnxruntime.run.duration"].GetHistogram()
	if h == nil || len(h.DataPoints) != 3 || len(h.DataPoints[0].ExplicitBounds) == 0 || len(h.DataPoints[0].BucketCounts) != len(h.DataPoints[0].ExplicitBounds)+1 {
		t.Fatalf("onnxruntime.run.duration = %v: want one explicit-bucket histogram point per pod", h)
	}
	// Another node shares no identity.
	m, _ := NewNode(tmpl, 4, shape, 1)
	for _, k := range []string{"service.instance.id", "k8s.pod.uid", "host.name"} {
		if resourceAttr(m, k) == resourceAttr(n, k) {
			t.Errorf("nodes 3 and 4 share %s %q", k, resourceAttr(n, k))
		}
	}
	noID, _ := NewNode(tmpl, 5, Shape{CPUs: 2, NoInstanceID: true}, 1)
	if _, ok := attrValue(noID.Metrics.ResourceMetrics[0].Resource.Attributes, "service.instance.id"); ok {
		t.Error("NoInstanceID: the resource still has service.instance.id")
	}
}

// TestNodeTick: every point is stamped at the tick, cumulative points never
// go down, and the run histogram counts the runs of the elapsed time.
func TestNodeTick(t *testing.T) {
	tmpl, err := LoadTemplate(templateFile)
	if err != nil {
		t.Fatal(err)
	}
	shape := Shape{CPUs: 2, Pods: 2, RunsPerSec: 20}
	n, err := NewNode(tmpl, 0, shape, 100)
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string][]float64{}
	for tick := 1; tick <= 3; tick++ {
		now := uint64(1_000_000 * tick)
		n.Tick(now, 15, shape)
		for _, sm := range n.Metrics.ResourceMetrics[0].ScopeMetrics {
			for _, m := range sm.Metrics {
				var vals []float64
				switch d := m.Data.(type) {
				case *metricspb.Metric_Sum:
					for _, p := range d.Sum.DataPoints {
						if p.TimeUnixNano != now || p.StartTimeUnixNano != 100 {
							t.Fatalf("%s: point at %d from %d, want %d from 100", m.Name, p.TimeUnixNano, p.StartTimeUnixNano, now)
						}
						v := p.GetAsDouble() + float64(p.GetAsInt())
						vals = append(vals, v)
						if d.Sum.IsMonotonic && len(prev[m.Name]) > 0 && v < prev[m.Name][len(vals)-1] {
							t.Errorf("%s went down: %v -> %v", m.Name, prev[m.Name][len(vals)-1], v)
						}
					}
				case *metricspb.Metric_Histogram:
					for _, p := range d.Histogram.DataPoints {
						if p.Count != uint64(tick*300) {
							t.Errorf("%s count %d after %d ticks of 15 s at 20 runs/s, want %d", m.Name, p.Count, tick, tick*300)
						}
						var sum uint64
						for _, c := range p.BucketCounts {
							sum += c
						}
						if sum != p.Count {
							t.Errorf("%s buckets hold %d of %d runs", m.Name, sum, p.Count)
						}
					}
				}
				prev[m.Name] = vals
			}
		}
	}
}

func TestNodeSpans(t *testing.T) {
	tmpl, err := LoadTemplate(templateFile)
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNode(tmpl, 1, Shape{CPUs: 2, Pods: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	req := n.Spans(5, 10_000_000_000, rand.New(rand.NewPCG(1, 2)))
	spans := req.ResourceSpans[0].ScopeSpans[0].Spans
	if len(spans) != 5 {
		t.Fatalf("%d spans, want 5", len(spans))
	}
	var pods []string
	for _, s := range spans {
		uid, ok := attrValue(s.Attributes, "k8s.pod.uid")
		if !ok || s.Name != "run "+modelName || s.EndTimeUnixNano <= s.StartTimeUnixNano {
			t.Errorf("span %v: want a run span of a pod", s)
		}
		if !slices.Contains(pods, uid.GetStringValue()) {
			pods = append(pods, uid.GetStringValue())
		}
	}
	if len(pods) != 2 {
		t.Errorf("spans of %d pods, want both", len(pods))
	}
	if v, _ := attrValue(req.ResourceSpans[0].Resource.Attributes, "service.instance.id"); v.GetStringValue() != "node-00001" {
		t.Errorf("span resource service.instance.id %q", v.GetStringValue())
	}
}
