package analysis_test

import (
	"fmt"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

// A CUDA run in which one RoiAlign fell back to the CPU, with the copies
// ONNX Runtime put on both sides of it, and a Shape node that the CPU runs
// on purpose.
func ExamplePlacement() {
	const cuda = "CUDAExecutionProvider"
	tl := []report.NodeTiming{
		{Name: "conv", OpType: "Conv", Provider: cuda, DurS: 4e-3, OutputSize: 262144},
		{Name: "Memcpy", OpType: "MemcpyToHost", Provider: cuda, DurS: 1e-3, OutputShapes: []string{"float[1,16,64,64]"}, OutputSize: 262144},
		{Name: "roi", OpType: "RoiAlign", Provider: "CPUExecutionProvider", DurS: 2e-3, OutputShapes: []string{"float[100,16,7,7]"}, OutputSize: 313600},
		{Name: "shape", OpType: "Shape", Provider: "CPUExecutionProvider", DurS: 0, OutputShapes: []string{"int64[4]"}, OutputSize: 32},
		{Name: "Memcpy_token_1", OpType: "MemcpyFromHost", Provider: cuda, DurS: 1e-3, OutputShapes: []string{"float[100,16,7,7]"}, OutputSize: 313600},
		{Name: "gather", OpType: "GatherND", Provider: cuda, DurS: 2e-3, OutputShapes: []string{"float[100,16]"}, OutputSize: 6400},
	}
	p := analysis.Placement([]string{cuda, "CPUExecutionProvider"}, tl)
	for _, r := range p.ByProvider {
		fmt.Printf("%s: %d nodes, %.0f%% of operator time\n", r.Provider, r.Nodes, 100*r.Share)
	}
	fmt.Printf("fallback: %d nodes (%s), %d shape node\n", p.Fallback.Nodes, p.Fallback.ByOpType[0].OpType, p.Fallback.ShapeNodes)
	for _, k := range p.Copies.ByKind {
		fmt.Printf("%s (%s): %d bytes, %.0f%%\n", k.OpType, k.Direction, k.Bytes, 100*k.Share)
	}
	// Output:
	// CUDAExecutionProvider: 4 nodes, 80% of operator time
	// CPUExecutionProvider: 2 nodes, 20% of operator time
	// fallback: 1 nodes (RoiAlign), 1 shape node
	// MemcpyFromHost (host_to_device): 313600 bytes, 10%
	// MemcpyToHost (device_to_host): 262144 bytes, 10%
}
