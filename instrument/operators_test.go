package instrument

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument/profile"
	"github.com/ortel-dev/ortel/test/testenv"
)

// checkOperators asserts that every operator span has a profiled run span as
// parent, lies inside it, and carries the node attributes. It returns the
// operator spans per run span.
func checkOperators(t *testing.T, p *providers, runName string) map[trace.SpanID][]sdktrace.ReadOnlySpan {
	t.Helper()
	runs := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, r := range spansNamed(p.spans, runName) {
		runs[r.SpanContext().SpanID()] = r
	}
	byRun := map[trace.SpanID][]sdktrace.ReadOnlySpan{}
	for _, s := range p.spans.Ended() {
		a := attrs(s.Attributes())
		if _, isOp := a[attrNodeOpType]; !isOp {
			continue
		}
		run, ok := runs[s.Parent().SpanID()]
		if !ok {
			t.Fatalf("operator span %q has parent %s, which is no run span", s.Name(), s.Parent().SpanID())
		}
		if s.SpanContext().TraceID() != run.SpanContext().TraceID() {
			t.Errorf("operator span %q is in another trace than its run", s.Name())
		}
		if !attrs(run.Attributes())[attrRunProfiled].AsBool() {
			t.Errorf("operator span %q is under a run not marked profiled", s.Name())
		}
		if s.StartTime().Before(run.StartTime()) || s.EndTime().After(run.EndTime()) {
			t.Errorf("operator %q [%v, %v] lies outside its run [%v, %v]", s.Name(),
				s.StartTime().Format(time.StampMicro), s.EndTime().Format(time.StampMicro),
				run.StartTime().Format(time.StampMicro), run.EndTime().Format(time.StampMicro))
		}
		for _, key := range []string{attrNodeName, attrExecutionProvider, attrNodeIndex, attrNodeInputShapes,
			attrNodeOutputShapes, attrNodeActivationSize, attrNodeParameterSize, attrNodeOutputSize, attrModelName} {
			if _, ok := a[key]; !ok {
				t.Errorf("operator span %q lacks %s", s.Name(), key)
			}
		}
		if a[attrNodeOpType].AsString() != s.Name() {
			t.Errorf("operator span name %q differs from its op type %q", s.Name(), a[attrNodeOpType].AsString())
		}
		byRun[run.SpanContext().SpanID()] = append(byRun[run.SpanContext().SpanID()], s)
	}
	return byRun
}

func TestProfileRunsEmitsOperatorSpans(t *testing.T) {
	p := newProviders(t)
	var mu sync.Mutex
	var observed []ProfiledNode
	s, in, out := chainSession(t, p, 4, 16, WithModelName("chain"), WithNodeObserver(func(n ProfiledNode) {
		mu.Lock()
		observed = append(observed, n)
		mu.Unlock()
	}))
	ctx := context.Background()
	for i := 0; i < 5; i++ { // unprofiled runs first
		if err := s.Run(ctx, in, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ProfileRuns(ctx, 3); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ { // 3 profiled, then 2 unprofiled again
		if err := s.Run(ctx, in, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	byRun := checkOperators(t, p, "run chain")
	if len(byRun) != 3 {
		t.Fatalf("operator spans sit under %d runs, want the 3 profiled ones", len(byRun))
	}
	var per int
	total := 0
	for _, ops := range byRun {
		if per == 0 {
			per = len(ops)
		}
		if len(ops) != per || per == 0 {
			t.Errorf("runs have %d and %d operators: every run of one model has the same nodes", per, len(ops))
		}
		total += len(ops)
	}
	profiled := 0
	for _, r := range spansNamed(p.spans, "run chain") {
		if attrs(r.Attributes())[attrRunProfiled].AsBool() {
			profiled++
		}
	}
	if profiled != 3 {
		t.Errorf("%d runs marked profiled, want 3", profiled)
	}
	rm := p.collect(t)
	if n := histCount(t, rm, "onnxruntime.node.duration", nil); int(n) != total {
		t.Errorf("node duration histogram count = %d, want one per operator span (%d)", n, total)
	}
	opTypes := histCount(t, rm, "onnxruntime.node.duration", func(s attribute.Set) bool {
		op, ok1 := s.Value(attribute.Key(attrNodeOpType))
		pr, ok2 := s.Value(attribute.Key(attrExecutionProvider))
		return ok1 && ok2 && op.AsString() != "" && pr.AsString() == "CPUExecutionProvider"
	})
	if int(opTypes) != total {
		t.Errorf("node histogram points without op type/provider: %d of %d carry them", opTypes, total)
	}
	if profiledHist := histCount(t, rm, "onnxruntime.run.duration", func(s attribute.Set) bool {
		v, _ := s.Value(attribute.Key(attrRunProfiled))
		return v.AsBool()
	}); profiledHist != 3 {
		t.Errorf("profiled runs in the duration histogram = %d, want 3", profiledHist)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(observed) != total {
		t.Errorf("node observer saw %d nodes, want %d", len(observed), total)
	}
}

// TestSampledProfilingWindow covers library mode: every 2nd run sampled,
// windows of 2 runs, opened off the Run path.
func TestSampledProfilingWindow(t *testing.T) {
	p := newProviders(t)
	dir := t.TempDir()
	s, in, out := chainSession(t, p, 2, 8, WithModelName("chain"),
		WithProfiling(Profiling{EveryN: 2, WindowRuns: 2, Dir: dir}))
	ctx := context.Background()
	// Windows open in the background, so the first sampled runs go
	// unprofiled; run until two windows worth of runs were profiled.
	deadline := time.Now().Add(20 * time.Second)
	for s.prof.runIndex.Load() < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d runs were profiled after 20s", s.prof.runIndex.Load())
		}
		if err := s.Run(ctx, in, out); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	byRun := checkOperators(t, p, "run chain")
	if len(byRun) < 4 {
		t.Errorf("operator spans under %d runs, want at least 4", len(byRun))
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Errorf("profile files left behind in %s: %d", dir, len(left))
	}
}

func TestProfilingKeepFiles(t *testing.T) {
	p := newProviders(t)
	dir := t.TempDir()
	s, in, out := chainSession(t, p, 1, 4, WithProfiling(Profiling{Dir: dir, KeepFiles: true}))
	ctx := context.Background()
	if err := s.ProfileRuns(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(ctx, in, out); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 1 {
		t.Fatalf("want the window's profile kept in %s, found %d files", dir, len(left))
	}
}

func TestRunsConcurrentSafe(t *testing.T) {
	p := newProviders(t)
	s, in, _ := chainSession(t, p, 2, 8, WithModelName("chain"),
		WithProfiling(Profiling{EveryN: 3, WindowRuns: 4}))
	ctx := context.Background()
	const workers, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs := []ortValue{nil}
			for i := 0; i < each; i++ {
				if err := s.Run(ctx, in, outs); err != nil {
					errs <- err
					return
				}
				outs[0].Destroy()
				outs[0] = nil
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(spansNamed(p.spans, "run chain")); n != workers*each {
		t.Fatalf("run spans = %d, want %d", n, workers*each)
	}
	checkOperators(t, p, "run chain")
	rm := p.collect(t)
	if n := histCount(t, rm, "onnxruntime.run.duration", nil); n != workers*each {
		t.Errorf("histogram count = %d, want %d", n, workers*each)
	}
}

func TestPlacementCentresORTInterval(t *testing.T) {
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	r := profiledRun{start: base, end: base.Add(1000 * time.Microsecond)}
	mr := &profile.Event{TS: 5000, Dur: 900}
	pl := place(r, mr)
	if want := base.Add(50 * time.Microsecond); !pl.origin.Equal(want) {
		t.Fatalf("origin = %v, want %v (100µs slack split evenly)", pl.origin, want)
	}
	tests := []struct {
		name       string
		ts, dur    int64
		start, end time.Duration
	}{
		{"first node", 5000, 100, 50 * time.Microsecond, 150 * time.Microsecond},
		{"middle node", 5400, 200, 450 * time.Microsecond, 650 * time.Microsecond},
		{"overhanging node is clamped", 5850, 300, 900 * time.Microsecond, 1000 * time.Microsecond},
		{"node before the run is clamped", 4900, 60, 0, 10 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, e := pl.interval(&profile.Event{TS: tt.ts, Dur: tt.dur})
			if !s.Equal(base.Add(tt.start)) || !e.Equal(base.Add(tt.end)) {
				t.Errorf("interval = [%v, %v], want [%v, %v]", s.Sub(base), e.Sub(base), tt.start, tt.end)
			}
		})
	}
	// ORT measured longer than the span (clock skew): no negative slack.
	pl = place(r, &profile.Event{TS: 0, Dur: 2000})
	if !pl.origin.Equal(base) {
		t.Errorf("origin with negative slack = %v, want the run start", pl.origin)
	}
}

func TestImportProfile(t *testing.T) {
	zr := bytes.NewReader(testenv.Gunzip(t, "profile/testdata/cls_2runs.json.gz"))
	p := newProviders(t)
	origin := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	st, err := ImportProfile(context.Background(), zr, origin, p.opts(WithModelName("cls"))...)
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 2 || st.Nodes == 0 || st.Nodes%2 != 0 || st.Dropped != 0 {
		t.Fatalf("import stats = %+v, want 2 runs with the same nodes", st)
	}
	runs := spansNamed(p.spans, "run cls")
	if len(runs) != 2 {
		t.Fatalf("run spans = %d, want 2", len(runs))
	}
	if runs[0].SpanContext().TraceID() == runs[1].SpanContext().TraceID() {
		t.Error("each model_run must be its own trace")
	}
	for _, r := range runs {
		if r.StartTime().Before(origin) || r.StartTime().After(origin.Add(time.Hour)) {
			t.Errorf("run placed at %v, not after the origin", r.StartTime())
		}
	}
	byRun := checkOperators(t, p, "run cls")
	if len(byRun) != 2 || len(byRun[runs[0].SpanContext().SpanID()])*2 != st.Nodes {
		t.Errorf("operators per run do not add up to %d", st.Nodes)
	}
	if st.Other == 0 || len(spansNamed(p.spans, "session_initialization")) != 1 {
		t.Errorf("session events were not imported (other = %d)", st.Other)
	}
}

func TestImportProfileBrokenFileKeepsWhatWasRead(t *testing.T) {
	p := newProviders(t)
	broken := `[
{"cat":"Node","pid":1,"tid":1,"dur":5,"ts":10,"ph":"X","name":"a_kernel_time","args":{"op_name":"Relu","provider":"CPUExecutionProvider"}},
{"cat":"Session","pid":1,"tid":1,"dur":30,"ts":5,"ph":"X","name":"model_run","args":{}},
{"cat":"Node","pid":1,"tid":1,"dur":5,"ts":50,"ph":"X","name":"b_kernel`
	st, err := ImportProfile(context.Background(), stringsReader(broken), time.Now(), p.opts()...)
	if err == nil {
		t.Fatal("a truncated profile imported without error")
	}
	if st.Runs != 1 || st.Nodes != 1 {
		t.Fatalf("stats = %+v: the complete run before the break must still be emitted", st)
	}
}
