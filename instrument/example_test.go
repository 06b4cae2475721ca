package instrument_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/instrument/views"
	"github.com/ortel-dev/ortel/internal/onnxgen"
)

// Example shows a service's inference path: a pipeline stage under the
// request's span, an instrumented run inside it, and operator profiling of
// one run in ten.
func Example() {
	if _, err := ortlib.Init(); err != nil {
		fmt.Println("run `make setup` first")
		return
	}
	// SDK side, done once by the program (here: spans kept in memory).
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()), sdkmetric.WithView(views.FromEnv()...))
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())

	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	model := filepath.Join(dir, "chain.onnx")
	if err := onnxgen.MatMulAddChain(2, 4).WriteFile(model); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	sess, err := instrument.NewDynamicSession(ctx, model, []string{"x"}, []string{"y"}, nil,
		instrument.WithTracerProvider(tp), instrument.WithMeterProvider(mp),
		instrument.WithModelName("chain"),
		instrument.WithProfiling(instrument.Profiling{EveryN: 10}))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)
	pipeline := instrument.NewPipeline("example", instrument.WithTracerProvider(tp), instrument.WithMeterProvider(mp))

	in, _ := ort.NewTensor(ort.NewShape(1, 4), []float32{1, 2, 3, 4})
	defer in.Destroy()
	outputs := []ort.Value{nil} // ORT allocates the output
	sctx, stage := pipeline.StartStage(ctx, "detect")
	err = sess.Run(sctx, []ort.Value{in}, outputs)
	stage.End(err)
	if err != nil {
		log.Fatal(err)
	}
	defer outputs[0].Destroy()

	for _, s := range rec.Ended() {
		if s.Name() == "run chain" {
			fmt.Println(s.Name(), "is a child of", parentName(rec, s.Parent().SpanID().String()))
		}
	}
	// Output: run chain is a child of detect
}

func parentName(rec *tracetest.SpanRecorder, id string) string {
	for _, s := range rec.Ended() {
		if s.SpanContext().SpanID().String() == id {
			return s.Name()
		}
	}
	return "?"
}

// ExampleImportProfile turns a profile written by ORT in any language into
// spans: here a real two-run profile of PaddleOCR's text classifier.
func ExampleImportProfile() {
	f, err := os.Open("profile/testdata/cls_2runs.json.gz")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	profileJSON, err := gzip.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	origin := time.Date(2026, 11, 22, 10, 31, 7, 0, time.UTC) // when the session was created
	st, err := instrument.ImportProfile(context.Background(), profileJSON, origin,
		instrument.WithTracerProvider(tp), instrument.WithModelName("cls"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d runs, %d operator spans per run\n", st.Runs, st.Nodes/st.Runs)
	// Output: 2 runs, 235 operator spans per run
}
