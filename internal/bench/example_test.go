package bench_test

import (
	"fmt"

	"github.com/ortel-dev/ortel/internal/bench"
)

func ExampleParseSLA() {
	for _, s := range []string{"20ms", "20ms@p95", "1.5s@p99.9", "20"} {
		sla, err := bench.ParseSLA(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(sla.Threshold, sla.Percentile)
	}
	// Output:
	// 20ms 99
	// 20ms 95
	// 1.5s 99.9
	// error: SLA "20": "20" is not a positive duration (for example 20ms, or 20ms@p95 for a percentile other than p99)
}

func ExampleParseBatches() {
	sizes, _ := bench.ParseBatches("1,2,4,8,16")
	fmt.Println(sizes, len(sizes) > 1)
	_, err := bench.ParseBatches("4,4")
	fmt.Println(err)
	// Output:
	// [1 2 4 8 16] true
	// Batches "4,4": size 4 is given twice
}

func ExampleParseScenario() {
	sc, _ := bench.ParseScenario("Server")
	fmt.Println(sc)
	_, err := bench.ParseScenario("bursty")
	fmt.Println(err)
	// Output:
	// server
	// Scenario "bursty": want one of single-stream, concurrent, server, offline
}

// The intra-op thread counts a tuning sweep tries by default, by the
// number of logical CPUs, and a --tune-threads override.
func ExampleDefaultTuneThreads() {
	for _, cpus := range []int{1, 2, 6, 16} {
		fmt.Println(cpus, bench.DefaultTuneThreads(cpus))
	}
	fmt.Println(bench.ParseTuneThreads("1,3"))
	fmt.Println(bench.ShellQuote("x=1,3,64,64"), bench.ShellQuote("my model.onnx"))
	// Output:
	// 1 [1]
	// 2 [1 2]
	// 6 [1 2 4 6]
	// 16 [1 2 4 8 16]
	// [1 3] <nil>
	// x=1,3,64,64 'my model.onnx'
}
