package main

import (
	"math"
	"strings"
	"testing"
)

func TestFitLine(t *testing.T) {
	for _, c := range []struct {
		name   string
		xs, ys []float64
		a, b   float64
		ok     bool
	}{
		{"exact", []float64{1, 2, 3}, []float64{3, 5, 7}, 1, 2, true},
		{"noisy", []float64{0, 1, 2, 3}, []float64{0.1, 0.9, 2.1, 2.9}, 0.06, 0.96, true},
		{"one point", []float64{1}, []float64{1}, 0, 0, false},
		{"same x", []float64{2, 2}, []float64{1, 3}, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b, ok := fitLine(c.xs, c.ys)
			if ok != c.ok || math.Abs(a-c.a) > 1e-9 || math.Abs(b-c.b) > 1e-9 {
				t.Errorf("fitLine = %v, %v, %v; want %v, %v, %v", a, b, ok, c.a, c.b, c.ok)
			}
		})
	}
}

// TestSummarize: the steps before each knee are fitted, the knee rows only
// named, and the limits solved from the fits.
func TestSummarize(t *testing.T) {
	rows := []Row{
		{Sweep: "nodes", Nodes: 100, Cores: 0.15, RSSMiB: 100, Series: 60000},
		{Sweep: "nodes", Nodes: 200, Cores: 0.25, RSSMiB: 150, Series: 120000},
		{Sweep: "nodes", Nodes: 400, Cores: 0.9, RSSMiB: 400, Series: 240000, Knee: "refused"},
		{Sweep: "spans", Nodes: 50, SpansPerNode: 10, SpansPerSec: 500, Cores: 0.1},
		{Sweep: "spans", Nodes: 50, SpansPerNode: 100, SpansPerSec: 5000, Cores: 0.55},
	}
	s, err := Summarize(rows, 1, 300)
	if err != nil {
		t.Fatal(err)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-6 }
	if !near(s.CoresPerNode, 0.001) || !near(s.NodesAtCPULimit, 950) || !near(s.MiBPerNode, 0.5) || !near(s.NodesAtMemoryLimit, 500) || !near(s.SeriesPerNode, 600) {
		t.Errorf("node fit %+v", s)
	}
	if !near(s.CoresPer1000Spans, 0.1) || !near(s.SpansAtCPULimit, 9500) {
		t.Errorf("span fit %+v", s)
	}
	if !strings.Contains(s.NodeKnee, "400 nodes: refused") || s.SpanKnee != "" {
		t.Errorf("knees %q, %q", s.NodeKnee, s.SpanKnee)
	}
	if _, err := Summarize(rows[2:3], 1, 300); err == nil {
		t.Error("a node sweep with no step before its knee must be an error")
	}
}
