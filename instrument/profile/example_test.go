package profile_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ortel-dev/ortel/instrument/profile"
)

// A profile as ONNX Runtime writes it, cut down to one Run of two nodes.
const src = `[
{"cat" : "Session","pid" :2918,"tid" :2920,"dur" :10758,"ts" :4,"ph" : "X","name" :"model_loading_uri","args" : {}},
{"cat" : "Node","pid" :2918,"tid" :2920,"dur" :3583,"ts" :154218,"ph" : "X","name" :"conv1_kernel_time","args" : {"thread_scheduling_stats" : {"main_thread": {"thread_pool_name": "session-1-intra-op", "thread_id": "1406", "block_size": [1], "core": 0, "Distribution": 8, "DistributionEnqueue": 0, "Run": 3418, "Wait": 3, "WaitRevoke": 2}, "sub_threads": {"1407": {"num_run": 1, "core": 1}}},"output_type_shape" : [{"float":[1,16,320,320]}],"output_size" : "6553600","parameter_size" : "1792","activation_size" : "4915200","node_index" : "0","input_type_shape" : [{"float":[1,3,640,640]},{"float":[16,3,3,3]},{"float":[16]}],"provider" : "CPUExecutionProvider","op_name" : "Conv"}},
{"cat" : "Node","pid" :2918,"tid" :2920,"dur" :120,"ts" :157900,"ph" : "X","name" :"relu1_kernel_time","args" : {"output_type_shape" : [{"float":[1,16,320,320]}],"output_size" : "6553600","parameter_size" : "0","activation_size" : "6553600","node_index" : "1","input_type_shape" : [{"float":[1,16,320,320]}],"provider" : "CPUExecutionProvider","op_name" : "Relu"}},
{"cat" : "Session","pid" :2918,"tid" :2920,"dur" :3900,"ts" :154214,"ph" : "X","name" :"SequentialExecutor::Execute","args" : {}},
{"cat" : "Session","pid" :2918,"tid" :2920,"dur" :4000,"ts" :154146,"ph" : "X","name" :"model_run","args" : {}}
]`

func ExampleReader() {
	r := profile.NewReader(strings.NewReader(src))
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		switch {
		case ev.IsKernel():
			fmt.Printf("%s (%s on %s): %dµs, inputs %v\n", ev.NodeName(), ev.OpName, ev.Provider, ev.Dur, ev.InputShapes)
		case ev.Name == "model_run":
			fmt.Printf("run: %dµs\n", ev.Dur)
		}
	}
	// Output:
	// conv1 (Conv on CPUExecutionProvider): 3583µs, inputs [float[1,3,640,640] float[16,3,3,3] float[16]]
	// relu1 (Relu on CPUExecutionProvider): 120µs, inputs [float[1,16,320,320]]
	// run: 4000µs
}

// Invalid JSON that ONNX Runtime has written is repaired with a warning
// where the meaning is clear; a truncated file stops with an error at a byte
// offset, after the events that were complete.
func ExampleReader_brokenProfile() {
	broken := `[
{"cat" : "Node","name" :"say"hi"_kernel_time","dur" :5,"args" : {"op_name" : "Conv",}},
{"cat" : "Session","name" :"model_run","dur" :9`
	r := profile.NewReader(strings.NewReader(broken))
	for {
		ev, err := r.Next()
		if err != nil {
			var se *profile.SyntaxError
			if errors.As(err, &se) {
				fmt.Println("stopped at byte", se.Offset)
			}
			break
		}
		fmt.Printf("%q %s\n", ev.NodeName(), ev.OpName)
	}
	for _, w := range r.Warnings() {
		fmt.Println("repaired:", w.Msg)
	}
	// Output:
	// "say\"hi\"" Conv
	// stopped at byte 137
	// repaired: unescaped '"' inside a string: kept as part of the string
	// repaired: unescaped '"' inside a string: kept as part of the string
	// repaired: trailing comma before '}' in the event's args: ignored
}

func ExampleReadFile() {
	dir, err := os.MkdirTemp("", "profile-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "onnxruntime_profile.json")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	// Total kernel time per operator type.
	perOp := map[string]int64{}
	_, err = profile.ReadFile(path, func(ev *profile.Event) error {
		if ev.IsKernel() {
			perOp[ev.OpName] += ev.Dur
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Conv:", perOp["Conv"], "µs; Relu:", perOp["Relu"], "µs")
	// Output:
	// Conv: 3583 µs; Relu: 120 µs
}
