package bench

import (
	"math"
	"slices"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

func TestParseBatches(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr string
	}{
		{"1", []int64{1}, ""},
		{"8", []int64{8}, ""},
		{"1,2,4,8,16", []int64{1, 2, 4, 8, 16}, ""},
		{" 4, 1 ,2", []int64{4, 1, 2}, ""},
		{"0", nil, "1 or more"},
		{"1,,2", nil, `"" is not`},
		{"1,two", nil, `"two" is not`},
		{"2,2", nil, "given twice"},
		{"-1", nil, "1 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBatches(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if _, err := ParseBatches("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33"); err == nil || !strings.Contains(err.Error(), "at most 32") {
		t.Errorf("33 sizes: err = %v", err)
	}
}

func step(b int64, itemsPerS float64, p99 float64, met *bool) report.BatchStep {
	s := report.BatchStep{Batch: b, ItemsPerS: itemsPerS, RunsPerS: itemsPerS / float64(b), Latency: stats.Summary{P99: p99}}
	if met != nil {
		s.SLA = &report.SLAResult{Met: *met}
	}
	return s
}

func TestFinishSweep(t *testing.T) {
	yes, no := true, false
	// Batch 1 at 100 items/s; batch 2 doubles it (perfect), batch 4 gains
	// 3x (75% efficient), batch 8 4x (50%).
	steps := []report.BatchStep{step(1, 100, 0.010, &yes), step(2, 200, 0.010, &yes), step(4, 300, 0.013, &yes), step(8, 400, 0.020, &no)}
	sw := finishSweep(steps, true)
	wantSpeedup := []float64{1, 2, 3, 4}
	wantEff := []float64{1, 1, 0.75, 0.5}
	for i, s := range sw.Steps {
		if math.Abs(s.Speedup-wantSpeedup[i]) > 1e-12 || math.Abs(s.Efficiency-wantEff[i]) > 1e-12 {
			t.Errorf("batch %d: speedup %v efficiency %v, want %v %v", s.Batch, s.Speedup, s.Efficiency, wantSpeedup[i], wantEff[i])
		}
	}
	if sw.ReferenceBatch != 1 || sw.BestBatch != 4 || sw.BestRule != bestRuleSLA {
		t.Errorf("reference %d best %d (%s); want 1 and 4: batch 8 misses the SLA", sw.ReferenceBatch, sw.BestBatch, sw.BestRule)
	}
	if sw := finishSweep(steps, false); sw.BestBatch != 8 || sw.BestRule != bestRule {
		t.Errorf("without an SLA the best is the fastest: %d", sw.BestBatch)
	}
	// The reference is the smallest size, wherever it is listed.
	sw = finishSweep([]report.BatchStep{step(8, 400, 0, nil), step(2, 100, 0, nil)}, false)
	if sw.ReferenceBatch != 2 || math.Abs(sw.Steps[0].Efficiency-1) > 1e-12 || math.Abs(sw.Steps[0].Speedup-4) > 1e-12 {
		t.Errorf("reference %d, batch 8 speedup %v efficiency %v; want 2, 4, 1", sw.ReferenceBatch, sw.Steps[0].Speedup, sw.Steps[0].Efficiency)
	}
	if sw := finishSweep([]report.BatchStep{step(1, 100, 0, &no)}, true); sw.BestBatch != 0 {
		t.Errorf("no size meets the SLA, best %d", sw.BestBatch)
	}
}

func TestRequireDynamicBatch(t *testing.T) {
	fixed := []ort.InputOutputInfo{{Name: "x", Dimensions: ort.NewShape(1, 3, 224, 224)}}
	err := requireDynamicBatch("m.onnx", fixed)
	if err == nil || !strings.Contains(err.Error(), `"m.onnx"`) || !strings.Contains(err.Error(), "x [1,3,224,224]") {
		t.Errorf("err = %v", err)
	}
	dyn := []ort.InputOutputInfo{{Name: "x", Dimensions: ort.NewShape(-1, 16)}}
	if err := requireDynamicBatch("m.onnx", dyn); err != nil {
		t.Error(err)
	}
	shapes := shapesForBatch(append(dyn, ort.InputOutputInfo{Name: "s", Dimensions: ort.NewShape(2, 1)}),
		map[string][]int64{"x": {1, 16}, "s": {2, 1}}, 8)
	if !slices.Equal(shapes["x"], []int64{8, 16}) || !slices.Equal(shapes["s"], []int64{2, 1}) {
		t.Errorf("shapes %v", shapes)
	}
}
