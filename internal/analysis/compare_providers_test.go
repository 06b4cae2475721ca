package analysis

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestComparePlacement: A ran the WebGPU fallback profile, B the same
// model with every node on WebGPU and no copy; compare shows both sides'
// providers, fallback and copies, and stays quiet for two CPU-only runs.
func TestComparePlacement(t *testing.T) {
	xs := realSamples(t)
	req := []string{"WebGpuExecutionProvider", CPUProvider}
	a, b := runWith(resample(xs, 100, 1, 1)), runWith(resample(xs, 100, 2, 1))
	a.Runtime.Providers, b.Runtime.Providers = req, req
	tl := profileTimeline(t, "webgpu_fallback.json")
	a.Operators = &report.Operators{ProfiledRuns: 1, Timeline: tl}
	var clean []report.NodeTiming
	for _, n := range tl {
		if IsMemcpy(n.OpType) {
			continue
		}
		n.Provider = "WebGpuExecutionProvider"
		clean = append(clean, n)
	}
	b.Operators = &report.Operators{ProfiledRuns: 1, Timeline: clean}
	c, err := Compare(a, b, "a", "b", CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	d := c.Placement
	if d == nil || d.AFallbackNodes != 3 || d.BFallbackNodes != 0 || d.ACopyNodes != 3 || d.BCopyNodes != 0 || d.ACopyBytes != 134 || d.BCopyBytes != 0 {
		t.Fatalf("placement delta = %+v", d)
	}
	if len(d.Providers) != 2 || d.Providers[0].Provider != "WebGpuExecutionProvider" || d.Providers[0].ANodes != 8 || d.Providers[0].BNodes != 9 ||
		d.Providers[1].Provider != CPUProvider || d.Providers[1].ANodes != 4 || d.Providers[1].BNodes != 0 {
		t.Errorf("providers = %+v", d.Providers)
	}
	var text, md bytes.Buffer
	if err := WriteComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := WriteComparisonMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{text.String(), md.String()} {
		for _, want := range []string{"WebGpu 8 → 9 nodes, CPU 4 → 0 nodes", "CPU fallback 3 nodes (0.7%) → 0 nodes (0.0%)", "memory copies 3 (134 B, 88.3%) → 0 (0 B, 0.0%)"} {
			if !strings.Contains(out, want) {
				t.Errorf("comparison lacks %q:\n%s", want, out)
			}
		}
	}

	// Two CPU-only runs: the placement is in the JSON, not in the text.
	cpu := []report.NodeTiming{node("Conv", cpuEP, 1e-3)}
	a.Runtime.Providers, b.Runtime.Providers = []string{cpuEP}, []string{cpuEP}
	a.Operators.Timeline, b.Operators.Timeline = cpu, cpu
	c, err = Compare(a, b, "a", "b", CompareConfig{})
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	if err := WriteComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if c.Placement == nil || strings.Contains(text.String(), "Execution providers") {
		t.Errorf("CPU-only placement %+v; text:\n%s", c.Placement, text.String())
	}
}
