//go:build linux

package attach

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/test/testenv"
)

// vadRunner is a Silero VAD session made through instrument in this very
// process, with its inputs and outputs allocated once.
type vadRunner struct {
	sess *instrument.DynamicSession
	ins  []ort.Value
	outs []ort.Value
}

func newVAD(t testing.TB, opts ...instrument.Option) *vadRunner {
	t.Helper()
	testenv.RequireORT(t)
	model := testenv.Model(t, "silero_vad_v5.onnx")
	sess, err := instrument.NewDynamicSession(context.Background(), model,
		[]string{"input", "state", "sr"}, []string{"output", "stateN"}, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]float32, 512)
	for i := range frame {
		frame[i] = float32(i%50) / 500
	}
	in, err1 := ort.NewTensor(ort.NewShape(1, 512), frame)
	st, err2 := ort.NewTensor(ort.NewShape(2, 1, 128), make([]float32, 256))
	sr, err3 := ort.NewScalar(int64(16000))
	out, err4 := ort.NewEmptyTensor[float32](ort.NewShape(1, 1))
	stN, err5 := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			t.Fatal(err)
		}
	}
	v := &vadRunner{sess: sess, ins: []ort.Value{in, st, sr}, outs: []ort.Value{out, stN}}
	t.Cleanup(func() {
		sess.Close(context.Background())
		for _, x := range append(v.ins, v.outs...) {
			x.Destroy()
		}
	})
	return v
}

func (v *vadRunner) run(t testing.TB, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := v.sess.Run(context.Background(), v.ins, v.outs); err != nil {
			t.Fatal(err)
		}
	}
}

// pairRuns returns the in-process and attached run spans of one session,
// each in the order the runs ended, and fails unless there are n of each.
func pairRuns(t testing.TB, in *tracetest.SpanRecorder, att *sinks, n int) (inSpans, attSpans []sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, sp := range in.Ended() {
		if sp.Name() == "run silero_vad_v5" {
			inSpans = append(inSpans, sp)
		}
	}
	attSpans = att.runSpans()
	if len(inSpans) != n || len(attSpans) != n {
		t.Fatalf("%d in-process and %d attached run spans, want %d of each", len(inSpans), len(attSpans), n)
	}
	byEnd := func(a, b sdktrace.ReadOnlySpan) int { return a.EndTime().Compare(b.EndTime()) }
	slices.SortFunc(inSpans, byEnd)
	slices.SortFunc(attSpans, byEnd)
	return inSpans, attSpans
}

// A Go process using instrument, attached: every run is seen once, with
// the model from CreateSession, and each attached run lies inside the
// in-process span of the same run (ONNX Runtime's Run is inside the Go
// call that times it). This fails if the kernel's monotonic timestamps
// are not converted to wall time, or runs are lost or doubled.
func TestAttachGoInProcess(t *testing.T) {
	inSpans, attSpans := attachedVADRuns(t, 300)
	// The wall clock conversion is exact to well under a microsecond;
	// slack covers the clocks being read a few nanoseconds apart.
	const slack = 2 * time.Microsecond
	for i := range inSpans {
		a, b := attSpans[i], inSpans[i]
		if a.StartTime().Before(b.StartTime().Add(-slack)) || a.EndTime().After(b.EndTime().Add(slack)) {
			t.Fatalf("run %d: attached [%v, %v] is not inside in-process [%v, %v]", i,
				a.StartTime().Format(time.RFC3339Nano), a.EndTime().Format(time.RFC3339Nano),
				b.StartTime().Format(time.RFC3339Nano), b.EndTime().Format(time.RFC3339Nano))
		}
		if m, _ := attr(a.Attributes(), "onnxruntime.model.name"); m != "silero_vad_v5" {
			t.Fatalf("attached run %d model %q", i, m)
		}
	}
	var ratios []float64
	for i := range inSpans {
		ratios = append(ratios, float64(attSpans[i].EndTime().Sub(attSpans[i].StartTime()))/float64(inSpans[i].EndTime().Sub(inSpans[i].StartTime())))
	}
	slices.Sort(ratios)
	t.Logf("attached/in-process run duration, median of %d runs: %.3f (figure, not asserted: see BenchmarkAttachedVsInProcess)", len(inSpans), ratios[len(ratios)/2])
}

// attachedVADRuns attaches to this process, runs Silero VAD n times through
// instrument, and returns the in-process and the attached run spans, run
// by run.
func attachedVADRuns(t testing.TB, n int) (inSpans, attSpans []sdktrace.ReadOnlySpan) {
	t.Helper()
	requireEBPF(t)
	testenv.RequireORT(t) // ONNX Runtime must be mapped before attach looks
	s := newSinks()
	tr, err := Start(s.pids(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	stop := runTracer(t, tr)
	rec := tracetest.NewSpanRecorder()
	v := newVAD(t, instrument.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	v.run(t, n)
	stop()
	return pairRuns(t, rec, s, n)
}
