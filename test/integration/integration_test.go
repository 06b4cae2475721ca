package integration

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/telemetry"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// pipelineCase runs a model in a pipeline stage, with some runs profiled,
// exporting through telemetry.Setup to a real OTLP receiver.
type pipelineCase struct {
	name        string
	model       func(t *testing.T) string
	input       string
	shape       []int64
	output      string
	runs        int
	profileRuns int
}

func TestPipelineThroughOTLPReceiver(t *testing.T) {
	testenv.RequireORT(t)
	cases := []pipelineCase{
		{
			name:  "paddleocr-det",
			model: func(t *testing.T) string { return testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx") },
			input: "x", shape: []int64{1, 3, 96, 96}, output: "sigmoid_0.tmp_0",
			runs: 8, profileRuns: 2,
		},
		{
			name: "matmul-add-chain",
			model: func(t *testing.T) string {
				p := filepath.Join(t.TempDir(), "chain.onnx")
				if err := onnxgen.MatMulAddChain(6, 32).WriteFile(p); err != nil {
					t.Fatal(err)
				}
				return p
			},
			input: "x", shape: []int64{1, 32}, output: "y",
			runs: 20, profileRuns: 3,
		},
		{
			name: "dynamic-batch",
			model: func(t *testing.T) string {
				p := filepath.Join(t.TempDir(), "dyn.onnx")
				if err := onnxgen.DynamicBatch(16, 3).WriteFile(p); err != nil {
					t.Fatal(err)
				}
				return p
			},
			input: "x", shape: []int64{4, 16}, output: "y",
			runs: 10, profileRuns: 2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { runPipelineCase(t, tc) })
	}
}

func runPipelineCase(t *testing.T, tc pipelineCase) {
	ctx := context.Background()
	model := tc.model(t)
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	tel, err := telemetry.Setup(ctx, telemetry.Config{
		ServiceName: "integration", Endpoint: "http://" + rcv.Endpoint(),
		OutputDir: t.TempDir(), MetricInterval: time.Hour, // exported at Shutdown
	})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Resolved.Mode != "otlp" {
		t.Fatalf("mode = %q, want otlp", tel.Resolved.Mode)
	}
	opts := []instrument.Option{
		instrument.WithTracerProvider(tel.TracerProvider),
		instrument.WithMeterProvider(tel.MeterProvider),
		instrument.WithModelName(tc.name),
	}
	sess, err := instrument.NewDynamicSession(ctx, model, []string{tc.input}, []string{tc.output}, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(1)
	for _, d := range tc.shape {
		n *= d
	}
	in, err := ort.NewTensor(ort.Shape(tc.shape), make([]float32, n))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Destroy()
	pl := instrument.NewPipeline("integration", opts...)
	tracer := tel.TracerProvider.Tracer("integration")

	total := tc.runs + tc.profileRuns
	for i := 0; i < total; i++ {
		if i == tc.runs {
			if err := sess.ProfileRuns(ctx, tc.profileRuns); err != nil {
				t.Fatal(err)
			}
		}
		rctx, req := tracer.Start(ctx, "request")
		sctx, stage := pl.StartStage(rctx, "detect")
		outs := []ort.Value{nil}
		err := sess.Run(sctx, []ort.Value{in}, outs)
		stage.End(err)
		req.End()
		if err != nil {
			t.Fatal(err)
		}
		outs[0].Destroy()
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	runName := "run " + tc.name
	if err := rcv.WaitSpans(wctx, func(s []otlptest.Span) bool { return len(otlptest.SpansNamed(s, runName)) == total }); err != nil {
		t.Fatalf("waiting for %d run spans: %v", total, err)
	}
	spans := rcv.Spans()

	// request → stage → run
	runs := otlptest.SpansNamed(spans, runName)
	for _, r := range runs {
		stage, ok := otlptest.SpanByID(spans, r.ParentSpanID())
		if !ok || stage.Name != "detect" {
			t.Fatalf("run span's parent is %q, want the detect stage", stage.Name)
		}
		if v, _ := otlptest.AttrString(stage.Attributes, "ortel.stage.name"); v != "detect" {
			t.Errorf("stage span lacks ortel.stage.name")
		}
		req, ok := otlptest.SpanByID(spans, stage.ParentSpanID())
		if !ok || req.Name != "request" {
			t.Fatalf("stage span's parent is %q, want request", req.Name)
		}
		if r.ServiceName() != "integration" {
			t.Errorf("service.name = %q", r.ServiceName())
		}
		if bs, ok := otlptest.AttrInt(r.Attributes, "onnxruntime.batch_size"); !ok || bs != tc.shape[0] {
			t.Errorf("batch size = %d (%v), want %d", bs, ok, tc.shape[0])
		}
	}

	// run → operator
	profiled := 0
	for _, r := range runs {
		isProf, _ := otlptest.AttrBool(r.Attributes, "onnxruntime.run.profiled")
		ops := otlptest.Children(spans, r)
		if !isProf {
			if len(ops) != 0 {
				t.Errorf("an unprofiled run has %d children", len(ops))
			}
			continue
		}
		profiled++
		if len(ops) == 0 {
			t.Fatal("a profiled run has no operator spans")
		}
		for _, op := range ops {
			if op.StartTimeUnixNano < r.StartTimeUnixNano || op.EndTimeUnixNano > r.EndTimeUnixNano {
				t.Errorf("operator %s lies outside its run", op.Name)
			}
			for _, key := range []string{"onnxruntime.node.name", "onnxruntime.node.op_type", "onnxruntime.execution_provider",
				"onnxruntime.node.input_type_shapes", "onnxruntime.node.output_type_shapes"} {
				if _, ok := otlptest.Attr(op.Attributes, key); !ok {
					t.Errorf("operator %s lacks %s", op.Name, key)
				}
			}
			for _, key := range []string{"onnxruntime.node.index", "onnxruntime.node.activation_size",
				"onnxruntime.node.parameter_size", "onnxruntime.node.output_size"} {
				if _, ok := otlptest.AttrInt(op.Attributes, key); !ok {
					t.Errorf("operator %s lacks %s", op.Name, key)
				}
			}
		}
	}
	if profiled != tc.profileRuns {
		t.Errorf("profiled runs = %d, want %d", profiled, tc.profileRuns)
	}

	// The run-duration histogram counts every run.
	if err := rcv.WaitMetrics(wctx, otlptest.HasMetric("onnxruntime.run.duration")); err != nil {
		t.Fatal(err)
	}
	if got := histogramCount(rcv.Metric("onnxruntime.run.duration")); got != uint64(total) {
		t.Errorf("run histogram count = %d, want %d", got, total)
	}
	if got := histogramCount(rcv.Metric("ortel.stage.duration")); got != uint64(total) {
		t.Errorf("stage histogram count = %d, want %d", got, total)
	}
	if got := histogramCount(rcv.Metric("onnxruntime.node.duration")); got == 0 {
		t.Error("no operator durations recorded")
	}
}

// histogramCount sums the counts of the last export of a histogram metric
// (explicit or exponential); cumulative temporality means the last export
// holds the totals.
func histogramCount(ms []*metricspb.Metric) uint64 {
	if len(ms) == 0 {
		return 0
	}
	m := ms[len(ms)-1]
	var n uint64
	switch d := m.Data.(type) {
	case *metricspb.Metric_Histogram:
		for _, dp := range d.Histogram.DataPoints {
			n += dp.Count
		}
	case *metricspb.Metric_ExponentialHistogram:
		for _, dp := range d.ExponentialHistogram.DataPoints {
			n += dp.Count
		}
	}
	return n
}
