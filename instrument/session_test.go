package instrument

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/instrument/internal/ortapi"
)

func TestRunSpansAndMetrics(t *testing.T) {
	p := newProviders(t)
	s, in, out := chainSession(t, p, 3, 8, WithModelName("chain"), WithExecutionProviders("CPUExecutionProvider"))
	const runs = 25
	for i := 0; i < runs; i++ {
		if err := s.Run(context.Background(), in, out); err != nil {
			t.Fatal(err)
		}
	}
	got := spansNamed(p.spans, "run chain")
	if len(got) != runs {
		t.Fatalf("got %d run spans, want %d", len(got), runs)
	}
	a := attrs(got[0].Attributes())
	if a[attrModelName].AsString() != "chain" {
		t.Errorf("model name = %q", a[attrModelName].AsString())
	}
	if a[attrSessionID].AsString() != s.SessionID() || len(s.SessionID()) != 16 {
		t.Errorf("session id = %q, want %q", a[attrSessionID].AsString(), s.SessionID())
	}
	if v := a[attrExecutionProviders].AsStringSlice(); len(v) != 1 || v[0] != "CPUExecutionProvider" {
		t.Errorf("providers = %v", v)
	}
	if b := a[attrBatchSize].AsInt64(); b != 1 {
		t.Errorf("batch size = %d, want 1", b)
	}
	if a[attrRunProfiled].AsBool() {
		t.Error("an unprofiled run is marked profiled")
	}
	if got[0].Status().Code == codes.Error {
		t.Error("a good run has status Error")
	}

	rm := p.collect(t)
	if n := histCount(t, rm, "onnxruntime.run.duration", nil); n != runs {
		t.Errorf("run duration histogram count = %d, want %d", n, runs)
	}
	if n := int64Sum(t, rm, "onnxruntime.runs"); n != runs {
		t.Errorf("runs counter = %d, want %d", n, runs)
	}
	if n := int64Sum(t, rm, "onnxruntime.run.active"); n != 0 {
		t.Errorf("active runs = %d, want 0", n)
	}
	if n := histCount(t, rm, "onnxruntime.session.creation.duration", nil); n != 1 {
		t.Errorf("session creation histogram count = %d, want 1", n)
	}
	if len(spansNamed(p.spans, "create_session chain")) != 1 {
		t.Error("no session creation span")
	}
	m, _ := metricByName(rm, "onnxruntime.run.duration")
	if m.Unit != "s" {
		t.Errorf("run duration unit = %q, want s", m.Unit)
	}
	dp := m.Data.(metricdata.Histogram[float64]).DataPoints[0]
	if v, _ := dp.Attributes.Value(attribute.Key(attrModelName)); v.AsString() != "chain" {
		t.Errorf("histogram model attribute = %q", v.AsString())
	}
	if _, ok := dp.Attributes.Value(attribute.Key(attrSessionID)); ok {
		t.Error("session id (high cardinality) must stay off metrics")
	}
}

func TestRunErrorIsRecorded(t *testing.T) {
	p := newProviders(t)
	s, _, out := chainSession(t, p, 2, 8, WithModelName("chain"))
	bad, err := ort.NewTensor(ort.NewShape(1, 5), make([]float32, 5)) // model wants [1,8]
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Destroy()
	err = s.Run(context.Background(), []ort.Value{bad}, out)
	if err == nil {
		t.Fatal("a run with a wrongly shaped input succeeded")
	}
	var re *RunError
	if !errors.As(err, &re) || re.Type != "invalid_argument" || re.Unwrap() == nil {
		t.Errorf("Run returned %T %v, want a *RunError of type invalid_argument", err, err)
	}
	spans := spansNamed(p.spans, "run chain")
	if len(spans) != 1 {
		t.Fatalf("got %d run spans, want 1", len(spans))
	}
	sp := spans[0]
	if sp.Status().Code != codes.Error {
		t.Errorf("status = %v, want Error", sp.Status().Code)
	}
	if et := attrs(sp.Attributes())[attrErrorType].AsString(); et != "invalid_argument" {
		t.Errorf("error.type = %q, want invalid_argument (error was %v)", et, err)
	}
	rm := p.collect(t)
	if n := int64Sum(t, rm, "onnxruntime.run.errors"); n != 1 {
		t.Errorf("errors counter = %d, want 1", n)
	}
	withErr := histCount(t, rm, "onnxruntime.run.duration", func(s attribute.Set) bool {
		v, ok := s.Value(attribute.Key(attrErrorType))
		return ok && v.AsString() == "invalid_argument"
	})
	if withErr != 1 {
		t.Errorf("failed runs in the duration histogram with error.type = %d, want 1", withErr)
	}
}

func TestCanceledContextDoesNotRun(t *testing.T) {
	p := newProviders(t)
	s, in, out := chainSession(t, p, 1, 4, WithModelName("chain"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Run(ctx, in, out); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run with a canceled context = %v, want context.Canceled", err)
	}
	sp := spansNamed(p.spans, "run chain")
	if len(sp) != 1 || attrs(sp[0].Attributes())[attrErrorType].AsString() != "canceled" {
		t.Fatalf("want one run span with error.type canceled")
	}
}

func TestRunAfterClose(t *testing.T) {
	p := newProviders(t)
	s, in, out := chainSession(t, p, 1, 4)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), in, out); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Close = %v, want ErrClosed", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
}

func TestCreateSessionErrorNamesModel(t *testing.T) {
	p := newProviders(t)
	chainModel(t, 1, 4) // loads ORT
	_, err := NewDynamicSession(context.Background(), "/nonexistent/model.onnx", []string{"x"}, []string{"y"}, nil, p.opts()...)
	if err == nil || !strings.Contains(err.Error(), `"/nonexistent/model.onnx"`) {
		t.Fatalf("error = %v, want it to name the model", err)
	}
	sp := spansNamed(p.spans, "create_session model")
	if len(sp) != 1 || sp[0].Status().Code != codes.Error {
		t.Fatal("want a failed create_session span")
	}
}

func TestAdvancedSession(t *testing.T) {
	p := newProviders(t)
	path := chainModel(t, 2, 4)
	in, _ := ort.NewTensor(ort.NewShape(1, 4), []float32{1, 2, 3, 4})
	out, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, 4))
	defer in.Destroy()
	defer out.Destroy()
	s, err := NewAdvancedSession(context.Background(), path, []string{"x"}, []string{"y"},
		[]ort.Value{in}, []ort.Value{out}, nil, p.opts(WithModelName("adv"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	for i := 0; i < 3; i++ {
		if err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ProfileRuns(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := s.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	runs := spansNamed(p.spans, "run adv")
	if len(runs) != 5 {
		t.Fatalf("got %d run spans, want 5", len(runs))
	}
	if b := attrs(runs[0].Attributes())[attrBatchSize].AsInt64(); b != 1 {
		t.Errorf("batch size = %d, want 1", b)
	}
	kids := childrenOf(p.spans)
	profiled := 0
	for _, r := range runs {
		if attrs(r.Attributes())[attrRunProfiled].AsBool() {
			profiled++
			if len(kids[r.SpanContext().SpanID()]) == 0 {
				t.Error("a profiled run of an AdvancedSession has no operator spans")
			}
		}
	}
	if profiled != 2 {
		t.Errorf("profiled runs = %d, want 2", profiled)
	}
	if out.GetData()[0] == 0 && out.GetData()[1] == 0 {
		t.Error("the session did not write its output")
	}
}

func TestWrapDynamic(t *testing.T) {
	p := newProviders(t)
	path := chainModel(t, 1, 4)
	raw, err := ort.NewDynamicAdvancedSession(path, []string{"x"}, []string{"y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := WrapDynamic(raw, p.opts(WithModelName("wrapped"))...)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	in, _ := ort.NewTensor(ort.NewShape(1, 4), []float32{1, 1, 1, 1})
	defer in.Destroy()
	outs := []ort.Value{nil}
	if err := s.Run(context.Background(), []ort.Value{in}, outs); err != nil {
		t.Fatal(err)
	}
	outs[0].Destroy()
	if len(spansNamed(p.spans, "run wrapped")) != 1 {
		t.Fatal("no run span for a wrapped session")
	}
	// A wrapped session is profiled per run (ONNX Runtime 1.25+); without
	// that, profiling it fails loudly instead of doing nothing.
	err = s.ProfileRuns(context.Background(), 1)
	if ortapi.RunProfiling() != nil {
		if err == nil {
			t.Error("profiling a wrapped session without run-level profiling should fail clearly")
		}
	} else {
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Run(context.Background(), []ort.Value{in}, outs[:1]); err != nil {
			t.Fatal(err)
		}
		outs[0].Destroy()
		if err := s.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		if byRun := checkOperators(t, p, "run wrapped"); len(byRun) != 1 {
			t.Errorf("operator spans under %d runs of the wrapped session, want 1", len(byRun))
		}
	}
	if _, err := WrapDynamic(nil); err == nil {
		t.Error("WrapDynamic(nil) should fail")
	}
}

func TestRunErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{context.Canceled, "canceled"},
		{context.DeadlineExceeded, "deadline_exceeded"},
		{ErrClosed, "session_closed"},
		{errors.New("Error running network: Got invalid dimensions for input: x for the following indices"), "invalid_argument"},
		{errors.New("Failed to allocate memory for requested buffer of size 123"), "out_of_memory"},
		{errors.New("Error running network: something else"), "ort_error"},
	}
	for _, tt := range tests {
		if got := runErrorType(tt.err); got != tt.want {
			t.Errorf("runErrorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

type codedError struct{}

func (codedError) Error() string     { return "coded" }
func (codedError) ErrorType() string { return "decode_failed" }

// TestErrorType: stages and generations classify any error, not only ORT's:
// a run's error keeps the type the run recorded, an error with an
// ErrorType method gives its own, others their Go type.
func TestErrorType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{fmt.Errorf("stage: %w", &RunError{Type: "invalid_argument", Err: errors.New("Got invalid dimensions")}), "invalid_argument"},
		{fmt.Errorf("stage: %w", codedError{}), "decode_failed"},
		{fmt.Errorf("stage: %w", context.DeadlineExceeded), "deadline_exceeded"},
		{errors.New("Got invalid dimensions, but not from a run"), "*errors.errorString"},
	}
	for _, tt := range tests {
		if got := errorType(tt.err); got != tt.want {
			t.Errorf("errorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestRunCountersOutliveSessions: the runs counter is monotonic per model
// across sessions, and keeps the last counts after Close.
func TestRunCountersOutliveSessions(t *testing.T) {
	p := newProviders(t)
	for i, runs := range []int{3, 2} {
		s, in, out := chainSession(t, p, 1, 4, WithModelName("counted"))
		for j := 0; j < runs; j++ {
			if err := s.Run(context.Background(), in, out); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		rm := p.collect(t)
		want := int64(3)
		if i == 1 {
			want = 5
		}
		if n := int64Sum(t, rm, "onnxruntime.runs"); n != want {
			t.Errorf("after session %d closed: runs = %d, want %d", i+1, n, want)
		}
		if n := int64Sum(t, rm, "onnxruntime.run.active"); n != 0 {
			t.Errorf("active = %d after Close", n)
		}
	}
}

func TestModelName(t *testing.T) {
	for path, want := range map[string]string{
		"models/ch_PP-OCRv4_det_infer.onnx": "ch_PP-OCRv4_det_infer",
		"/abs/v1.2/model.ort":               "model",
		"noext":                             "noext",
		"":                                  "model",
	} {
		if got := ModelName(path); got != want {
			t.Errorf("ModelName(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestWrapWithProfilingFailsWithoutRunProfiling(t *testing.T) {
	p := newProviders(t)
	path := chainModel(t, 1, 4)
	raw, err := ort.NewDynamicAdvancedSession(path, []string{"x"}, []string{"y"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := WrapDynamic(raw, p.opts(WithModelName("wrapped"), WithProfiling(Profiling{EveryN: 2}))...)
	if ortapi.RunProfiling() == nil {
		if err != nil {
			t.Fatalf("WrapDynamic with profiling on ONNX Runtime %s = %v", ortapi.LibraryVersion(), err)
		}
		s.Close(context.Background())
		return
	}
	defer raw.Destroy()
	if err == nil || !strings.Contains(err.Error(), "1.25") {
		t.Fatalf("WrapDynamic with profiling on ONNX Runtime %s = %v, want an error naming the version needed", ortapi.LibraryVersion(), err)
	}
}
