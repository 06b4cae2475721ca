package profile

import (
	"reflect"
	"testing"
)

func TestTypeShapeString(t *testing.T) {
	tests := []struct {
		ts   TypeShape
		want string
	}{
		{TypeShape{"float", []int64{1, 3, 640, 640}}, "float[1,3,640,640]"},
		{TypeShape{"int64", nil}, "int64[]"},
		{TypeShape{"float16", []int64{-1, 7}}, "float16[-1,7]"},
		{TypeShape{}, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.ts.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := string(tt.ts.AppendTo([]byte("x:"))); got != "x:"+tt.want {
				t.Errorf("AppendTo = %q", got)
			}
		})
	}
}

func TestEventNodeNameAndIsKernel(t *testing.T) {
	tests := []struct {
		cat, name string
		node      string
		kernel    bool
	}{
		{"Node", "conv1_kernel_time", "conv1", true},
		{"Node", "conv1_fence_before", "conv1", false},
		{"Node", "conv1_fence_after", "conv1", false},
		{"Node", "conv1", "conv1", false},
		{"Node", "_kernel_time", "", true},
		{"Session", "model_run", "model_run", false},
		{"Session", "x_kernel_time", "x_kernel_time", false},
		{"Api", "y_kernel_time", "y_kernel_time", false},
	}
	for _, tt := range tests {
		t.Run(tt.cat+"/"+tt.name, func(t *testing.T) {
			e := &Event{Category: tt.cat, Name: tt.name}
			if got := e.NodeName(); got != tt.node {
				t.Errorf("NodeName() = %q, want %q", got, tt.node)
			}
			if got := e.IsKernel(); got != tt.kernel {
				t.Errorf("IsKernel() = %v, want %v", got, tt.kernel)
			}
		})
	}
}

func TestEventClone(t *testing.T) {
	e := &Event{
		Name:         "n",
		InputShapes:  []TypeShape{{"float", []int64{1, 2}}},
		OutputShapes: []TypeShape{{"int8", []int64{3}}},
		Threads:      ThreadStats{Present: true, SubThreads: []SubThread{{ID: "1", NumRun: 2, Core: 3}}},
	}
	c := e.Clone()
	if !reflect.DeepEqual(c, *e) {
		t.Fatalf("Clone() = %+v, want %+v", c, *e)
	}
	e.InputShapes[0].Dims[0] = 99
	e.InputShapes[0].Type = "x"
	e.OutputShapes[0].Dims[0] = 99
	e.Threads.SubThreads[0].NumRun = 99
	if c.InputShapes[0].Dims[0] != 1 || c.InputShapes[0].Type != "float" || c.OutputShapes[0].Dims[0] != 3 || c.Threads.SubThreads[0].NumRun != 2 {
		t.Errorf("Clone shares memory with the original: %+v", c)
	}
	if z := (&Event{}).Clone(); z.InputShapes != nil || z.Threads.SubThreads != nil {
		t.Errorf("Clone of an empty event made slices: %+v", z)
	}
}

func TestEventResetKeepsCapacity(t *testing.T) {
	e := &Event{Name: "n", TS: 5, OpName: "Conv", NodeIndex: 3,
		InputShapes: []TypeShape{{"float", []int64{1, 2, 3}}},
		Threads:     ThreadStats{Present: true, Run: 4, SubThreads: []SubThread{{ID: "1"}}}}
	e.reset()
	want := Event{NodeIndex: -1, ActivationSize: -1, ParameterSize: -1, OutputSize: -1}
	got := *e
	got.InputShapes, got.OutputShapes, got.Threads.SubThreads = nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after reset: %+v", got)
	}
	if len(e.InputShapes) != 0 || cap(e.InputShapes) != 1 || cap(e.Threads.SubThreads) != 1 {
		t.Errorf("reset lost the slices' capacity")
	}
	ts := addShape(&e.InputShapes)
	if len(ts.Dims) != 0 || cap(ts.Dims) != 3 || ts.Type != "" {
		t.Errorf("addShape did not reuse the old element: %+v cap %d", ts, cap(ts.Dims))
	}
	ts2 := addShape(&e.InputShapes)
	if len(e.InputShapes) != 2 || ts2.Dims != nil {
		t.Errorf("addShape beyond capacity: %+v", e.InputShapes)
	}
}
