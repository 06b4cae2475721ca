package profile

import (
	"reflect"
	"testing"
)

// decodeCases check how event keys and args map onto Event.
var decodeCases = []readerCase{
	{name: "numbers as strings and as numbers", in: `[
{"name":"s","args":{"node_index":"7","activation_size":"100","parameter_size":"20","output_size":"3"}},
{"name":"n","args":{"node_index":7,"activation_size":100,"parameter_size":20,"output_size":3}}]`,
		names: []string{"s", "n"},
		check: func(t *testing.T, evs []Event) {
			for _, e := range evs {
				if e.NodeIndex != 7 || e.ActivationSize != 100 || e.ParameterSize != 20 || e.OutputSize != 3 {
					t.Errorf("%s: index %d sizes %d %d %d", e.Name, e.NodeIndex, e.ActivationSize, e.ParameterSize, e.OutputSize)
				}
			}
		}},
	{name: "absent args", in: `[{"name":"a"}]`, names: []string{"a"},
		check: func(t *testing.T, evs []Event) {
			e := evs[0]
			if e.NodeIndex != -1 || e.ActivationSize != -1 || e.ParameterSize != -1 || e.OutputSize != -1 || e.Threads.Present {
				t.Errorf("absent args read as %+v", e)
			}
		}},
	{name: "fractional and exponent numbers", in: `[{"name":"a","ts":1.6,"dur":"2.4","pid":1e3,"tid":-5}]`, names: []string{"a"},
		check: func(t *testing.T, evs []Event) {
			if e := evs[0]; e.TS != 2 || e.Dur != 2 || e.PID != 1000 || e.TID != -5 {
				t.Errorf("ts %d dur %d pid %d tid %d", e.TS, e.Dur, e.PID, e.TID)
			}
		}},
	{name: "nulls are absent", in: `[{"name":"a","cat":null,"ts":null,"args":{"op_name":null,"node_index":null,"input_type_shape":null,"thread_scheduling_stats":null}}]`, names: []string{"a"},
		check: func(t *testing.T, evs []Event) {
			if e := evs[0]; e.Category != "" || e.TS != 0 || e.NodeIndex != -1 || e.Threads.Present || len(e.InputShapes) != 0 {
				t.Errorf("nulls read as %+v", e)
			}
		}},
	{name: "wrong kinds are skipped with a warning", in: `[{"name":"a","ts":"soon","args":{"op_name":5,"provider":["x"],"output_type_shape":{"a":1},"thread_scheduling_stats":[1]}}]`,
		names: []string{"a"},
		warns: []string{`"ts" holds a string that is not a number`, `"op_name" is not a string`, `"provider" is not a string`, `"output_type_shape" is not an array`, `"thread_scheduling_stats" is not an object`}},
	{name: "nested unknown args", in: `[{"cat":"Node","name":"n_kernel_time","id":9,"s":"g","args":{"extra":{"deep":[1,{"x":[true,false,null,"s\"q",-1.5e3]}],"e":{}},"op_name":"Conv","more":[[],[[]],{}],"provider":"P"},"tts":5}]`,
		names: []string{"n_kernel_time"},
		check: func(t *testing.T, evs []Event) {
			if e := evs[0]; e.OpName != "Conv" || e.Provider != "P" {
				t.Errorf("op %q provider %q", e.OpName, e.Provider)
			}
		}},
	{name: "shapes", in: `[{"name":"a","args":{"input_type_shape":[{"float":[1,3,640,640]},{"int64":[]},{"float":[2],"int8":[3]},{}],"output_type_shape":[{"float":["4","x",null]}]}}]`,
		names: []string{"a"},
		warns: []string{`"a dimension" holds a string that is not a number`},
		check: func(t *testing.T, evs []Event) {
			wantShapes(t, evs[0].InputShapes, "float[1,3,640,640]", "int64[]", "float[2]", "int8[3]")
			wantShapes(t, evs[0].OutputShapes, "float[4,-1,-1]")
		}},
	{name: "empty thread stats string is absent, silently", in: `[{"name":"a","args":{"thread_scheduling_stats":""}},{"name":"b","args":{"thread_scheduling_stats" : "","op_name":"Conv"}}]`, names: []string{"a", "b"}},
	{name: "non-empty thread stats string warns", in: `[{"name":"a","args":{"thread_scheduling_stats":"x"}}]`, names: []string{"a"},
		warns: []string{`"thread_scheduling_stats" is a non-empty string`}},
	{name: "thread stats", in: `[{"name":"a","args":{"thread_scheduling_stats":{"main_thread":{"thread_pool_name":"pool","thread_id":"1","block_size":[1,2,3],"core":0,"Distribution":4,"DistributionEnqueue":5,"Run":6,"Wait":7,"WaitRevoke":8,"Future":{"x":1}},"sub_threads":{"11":{"num_run":2,"core":1},"12":{"num_run":"3"},"13":null},"future":[1]}}}]`,
		names: []string{"a"},
		check: func(t *testing.T, evs []Event) {
			want := ThreadStats{Present: true, PoolName: "pool", BlockSizes: 3, Distribution: 4, DistributionEnqueue: 5, Run: 6, Wait: 7, WaitRevoke: 8,
				SubThreads: []SubThread{{ID: "11", NumRun: 2, Core: 1}, {ID: "12", NumRun: 3, Core: -1}}}
			if got := evs[0].Threads; !reflect.DeepEqual(got, want) {
				t.Errorf("Threads = %+v\nwant %+v", got, want)
			}
		}},
	{name: "duplicate keys: last wins", in: `[{"name":"a","name":"b","args":{"input_type_shape":[{"float":[1]}],"input_type_shape":[{"int8":[2]}]}}]`, names: []string{"b"},
		check: func(t *testing.T, evs []Event) { wantShapes(t, evs[0].InputShapes, "int8[2]") }},
	{name: "escaped keys", in: `[{"n\u0061me":"a","\u0061rgs":{"op_\u006eame":"Conv"}}]`, names: []string{"a"},
		check: func(t *testing.T, evs []Event) {
			if evs[0].OpName != "Conv" {
				t.Errorf("OpName = %q", evs[0].OpName)
			}
		}},

	{name: "fence events", in: `[{"cat":"Node","name":"conv_fence_before","args":{"op_name":"Conv"}},{"cat":"Node","name":"conv_kernel_time","args":{"op_name":"Conv"}},{"cat":"Node","name":"conv_fence_after","args":{"op_name":"Conv"}}]`,
		names: []string{"conv_fence_before", "conv_kernel_time", "conv_fence_after"},
		check: func(t *testing.T, evs []Event) {
			for i, e := range evs {
				if e.NodeName() != "conv" || e.IsKernel() != (i == 1) {
					t.Errorf("%s: NodeName %q IsKernel %v", e.Name, e.NodeName(), e.IsKernel())
				}
			}
		}},
	{name: "args of a session event", in: `[{"cat":"Session","name":"model_run","args":{}}]`, names: []string{"model_run"},
		check: func(t *testing.T, evs []Event) {
			if e := evs[0]; e.OpName != "" || e.NodeIndex != -1 || e.IsKernel() || e.NodeName() != "model_run" {
				t.Errorf("%+v", e)
			}
		}},
	{name: "fields reset between events", in: `[{"name":"a","ts":5,"args":{"op_name":"Conv","node_index":"3","input_type_shape":[{"float":[1]}],"thread_scheduling_stats":{"main_thread":{"Run":9},"sub_threads":{"1":{}}}}},{"name":"b"}]`,
		names: []string{"a", "b"},
		check: func(t *testing.T, evs []Event) {
			e := evs[1]
			if e.TS != 0 || e.OpName != "" || e.NodeIndex != -1 || len(e.InputShapes) != 0 || e.Threads.Present || e.Threads.Run != 0 || len(e.Threads.SubThreads) != 0 {
				t.Errorf("second event keeps fields of the first: %+v", e)
			}
		}},
}

func TestDecodeCases(t *testing.T) { runCases(t, decodeCases) }

func TestKeyTables(t *testing.T) {
	for _, tt := range []struct {
		lookup func([]byte) int
		keys   map[string]int
	}{
		{eventKey, map[string]int{"cat": keyCat, "name": keyName, "ph": keyPh, "pid": keyPID, "tid": keyTID, "ts": keyTS, "dur": keyDur, "args": keyArgs, "Cat": keyUnknown, "": keyUnknown}},
		{argsKey, map[string]int{"op_name": keyOpName, "provider": keyProvider, "node_index": keyNodeIndex, "activation_size": keyActivationSize,
			"parameter_size": keyParameterSize, "output_size": keyOutputSize, "input_type_shape": keyInputTypeShape,
			"output_type_shape": keyOutputTypeShape, "thread_scheduling_stats": keyThreadStats, "cat": keyUnknown}},
		{statsKey, map[string]int{"main_thread": keyMainThread, "sub_threads": keySubThreads, "thread_pool_name": keyPoolName, "block_size": keyBlockSize,
			"Distribution": keyDistribution, "DistributionEnqueue": keyDistributionEnqueue, "Run": keyRun, "Wait": keyWait,
			"WaitRevoke": keyWaitRevoke, "num_run": keyNumRun, "core": keyCore, "run": keyUnknown}},
	} {
		for k, want := range tt.keys {
			if got := tt.lookup([]byte(k)); got != want {
				t.Errorf("key %q maps to %d, want %d", k, got, want)
			}
		}
	}
}

// TestDecodeAllocs checks the steady state: once its strings are interned,
// reading an event allocates nothing.
func TestDecodeAllocs(t *testing.T) {
	in := loadReal(t)
	r := NewReader(nil)
	read := func() {
		r.Reset(bytesReader(in))
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}
	read() // warm up: buffers and the intern table
	allocs := testing.AllocsPerRun(5, read)
	// One bytes.Reader per run; nothing per event.
	if allocs > 2 {
		t.Errorf("%.0f allocations to read %d events, want none per event", allocs, realEvents)
	}
}
