package main

import (
	"fmt"
	"strings"
)

// fitLine is the least-squares line y = a + b·x through the points; ok is
// false with fewer than two distinct x.
func fitLine(xs, ys []float64) (a, b float64, ok bool) {
	n := float64(len(xs))
	if len(xs) < 2 || len(xs) != len(ys) {
		return 0, 0, false
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, 0, false
	}
	b = (n*sxy - sx*sy) / d
	return (sy - b*sx) / n, b, true
}

// Summary is what one gateway replica serves, from the sweeps' rows
// before their knees: the cost of a node and of a span, and the nodes and
// spans per second that reach the CPU limit and the memory limiter.
type Summary struct {
	CoresPerNode, CoresBase      float64
	MiBPerNode, MiBBase          float64
	SeriesPerNode                float64
	NodesAtCPULimit              float64
	NodesAtMemoryLimit           float64
	CoresPer1000Spans, SpansBase float64
	SpansAtCPULimit              float64
	NodeKnee, SpanKnee           string
}

// Summarize fits the rows: cores, RSS and series against nodes (node
// sweep), cores against spans per second (span sweep). cpuLimit is the
// collector's cores, memMiB the memory its limiter lets it hold before it
// refuses (limit_mib - spike_limit_mib).
func Summarize(rows []Row, cpuLimit, memMiB float64) (Summary, error) {
	var s Summary
	var n, cores, rss, series, spans, spanCores []float64
	for _, r := range rows {
		switch {
		case r.Sweep == "nodes" && r.Knee != "":
			s.NodeKnee = fmt.Sprintf("%d nodes: %s", r.Nodes, r.Knee)
		case r.Sweep == "nodes":
			n = append(n, float64(r.Nodes))
			cores = append(cores, r.Cores)
			rss = append(rss, r.RSSMiB)
			series = append(series, float64(r.Series))
		case r.Sweep == "spans" && r.Knee != "":
			s.SpanKnee = fmt.Sprintf("%.0f spans/s (%d nodes × %g): %s", r.SpansPerSec, r.Nodes, r.SpansPerNode, r.Knee)
		case r.Sweep == "spans":
			spans = append(spans, r.SpansPerSec)
			spanCores = append(spanCores, r.Cores)
		}
	}
	var ok1, ok2, ok3 bool
	s.CoresBase, s.CoresPerNode, ok1 = fitLine(n, cores)
	s.MiBBase, s.MiBPerNode, ok2 = fitLine(n, rss)
	_, s.SeriesPerNode, ok3 = fitLine(n, series)
	if !ok1 || !ok2 || !ok3 {
		return s, fmt.Errorf("the node sweep has fewer than two steps before its knee: nothing to fit")
	}
	if s.CoresPerNode > 0 {
		s.NodesAtCPULimit = (cpuLimit - s.CoresBase) / s.CoresPerNode
	}
	if s.MiBPerNode > 0 {
		s.NodesAtMemoryLimit = (memMiB - s.MiBBase) / s.MiBPerNode
	}
	var b float64
	var ok bool
	if s.SpansBase, b, ok = fitLine(spans, spanCores); ok && b > 0 {
		s.CoresPer1000Spans = 1000 * b
		s.SpansAtCPULimit = (cpuLimit - s.SpansBase) / b
	}
	return s, nil
}

// Markdown is the summary in words, for results.md.
func (s Summary) Markdown(cpuLimit, memMiB float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- per node: %.4f cores, %.2f MiB of collector RSS, %.0f series at the exporter (fits over the steps before the knee; base %.3f cores, %.0f MiB)\n", s.CoresPerNode, s.MiBPerNode, s.SeriesPerNode, s.CoresBase, s.MiBBase)
	fmt.Fprintf(&b, "- nodes per replica: %.0f at its CPU limit (%g core), %.0f at its memory limiter (%.0f MiB of RSS)\n", s.NodesAtCPULimit, cpuLimit, s.NodesAtMemoryLimit, memMiB)
	if s.CoresPer1000Spans > 0 {
		fmt.Fprintf(&b, "- spans: %.3f cores per 1000 spans/s; %.0f spans/s at the CPU limit\n", s.CoresPer1000Spans, s.SpansAtCPULimit)
	}
	if s.NodeKnee != "" {
		fmt.Fprintf(&b, "- node sweep knee: %s\n", s.NodeKnee)
	}
	if s.SpanKnee != "" {
		fmt.Fprintf(&b, "- span sweep knee: %s\n", s.SpanKnee)
	}
	return b.String()
}
