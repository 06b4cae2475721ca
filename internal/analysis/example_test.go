package analysis_test

import (
	"fmt"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

// The FLOPs of a 3x3 convolution from 96 to 32 channels on a 160x160 map,
// as ONNX Runtime's profiler records its shapes.
func ExampleOperatorFLOPs() {
	w := analysis.OperatorFLOPs("Conv",
		[]string{"float[1,96,160,160]", "float[32,96,3,3]", "float[32]"},
		[]string{"float[1,32,160,160]"})
	fmt.Printf("%s: %.0f MFLOP\n", w.Class, w.FLOPs/1e6)

	// ORT pre-packed this ConvTranspose's weight: its work is unknown.
	w = analysis.OperatorFLOPs("ConvTranspose", []string{"float[1,24,160,160]"}, []string{"float[1,24,320,320]"})
	fmt.Println(w.Known, w.Reason)
	// Output:
	// conv: 1416 MFLOP
	// false ConvTranspose: the weight shape is not in the profile (ONNX Runtime pre-packed it)
}

// One operator against a machine of 100 GFLOP/s and 10 GB/s.
func ExampleRoofline() {
	ops := &report.Operators{Timeline: []report.NodeTiming{{
		Name: "add", OpType: "Add", Provider: "CPUExecutionProvider", DurS: 2e-3,
		InputShapes: []string{"float[1000000]", "float[1000000]"}, OutputShapes: []string{"float[1000000]"},
		ActivationSize: 8e6, OutputSize: 4e6,
	}}}
	r := analysis.Roofline(ops, &report.Peaks{FLOPsPerS: 100e9, BytesPerS: 10e9})
	op := r.Ops[0]
	fmt.Printf("%s-bound, %.3f FLOP/byte, %.0f%% of its roof\n", op.Bound, *op.Intensity, 100**op.RoofShare)
	// Output: memory-bound, 0.083 FLOP/byte, 60% of its roof
}

// Compare two runs: B's latencies are A's, 10% slower.
func ExampleCompare() {
	var a, b []float64
	for i := range 200 {
		v := 0.010 + 0.0001*float64(i%17)
		a = append(a, v)
		b = append(b, v*1.10)
	}
	ra := &report.Report{Latency: report.Latency{Samples: a}}
	rb := &report.Report{Latency: report.Latency{Samples: b}}
	c, err := analysis.Compare(ra, rb, "a.json", "b.json", analysis.CompareConfig{Threshold: 0.05})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Verdict, c.Regression.Exceeded)
	// Output: slower true
}
