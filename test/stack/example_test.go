package stack_test

import (
	"fmt"

	"github.com/ortel-dev/ortel/test/stack"
)

func ExamplePromName() {
	fmt.Println(stack.PromName("onnxruntime.run.duration", "s", stack.Histogram))
	fmt.Println(stack.PromName("onnxruntime.runs", "{run}", stack.Counter))
	fmt.Println(stack.PromName("system.cpu.utilization", "1", stack.Gauge))
	fmt.Println(stack.PromName("hw.energy", "J", stack.Counter))
	// Output:
	// onnxruntime_run_duration_seconds
	// onnxruntime_runs_total
	// system_cpu_utilization_ratio
	// hw_energy_joules_total
}

func ExampleMetricNames() {
	names, err := stack.MetricNames(`histogram_quantile(0.99, sum by (le) (rate(onnxruntime_run_duration_seconds_bucket{onnxruntime_model_name=~"$model"}[$__rate_interval])))`)
	fmt.Println(names, err)
	// Output: [onnxruntime_run_duration_seconds_bucket] <nil>
}
