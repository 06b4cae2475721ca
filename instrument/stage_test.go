package instrument

import (
	"context"
	"errors"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestStages(t *testing.T) {
	p := newProviders(t)
	s, in, _ := chainSession(t, p, 1, 8, WithModelName("chain"))
	pl := NewPipeline("ocr", p.opts()...)
	ctx, req := p.tp.Tracer("test").Start(context.Background(), "request")

	// A good stage holding a run: request → stage → run.
	sctx, st := pl.StartStage(ctx, "detect")
	outs := []ort.Value{nil}
	if err := s.Run(sctx, in, outs); err != nil {
		t.Fatal(err)
	}
	outs[0].Destroy()
	st.End(nil)

	// A stage whose run failed keeps the run's error.type.
	bad, _ := ort.NewTensor(ort.NewShape(1, 3), []float32{1, 2, 3})
	defer bad.Destroy()
	sctx, st = pl.StartStage(ctx, "recognize")
	st.End(s.Run(sctx, []ort.Value{bad}, []ort.Value{nil}))

	// A stage that failed in the caller's own code gets its Go type.
	_, st = pl.StartStage(ctx, "decode")
	st.End(errors.New("corrupt image"))
	req.End()

	byName := map[string]attribute.Set{}
	for _, sp := range p.spans.Ended() {
		byName[sp.Name()] = attribute.NewSet(sp.Attributes()...)
	}
	for _, tt := range []struct{ stage, errType string }{
		{"detect", ""}, {"recognize", "invalid_argument"}, {"decode", "*errors.errorString"},
	} {
		a, ok := byName[tt.stage]
		if !ok {
			t.Fatalf("no %s stage span", tt.stage)
		}
		if v, _ := a.Value(attribute.Key(attrStageName)); v.AsString() != tt.stage {
			t.Errorf("%s: ortel.stage.name = %q", tt.stage, v.AsString())
		}
		if v, _ := a.Value(attribute.Key(attrPipelineName)); v.AsString() != "ocr" {
			t.Errorf("%s: ortel.pipeline.name = %q", tt.stage, v.AsString())
		}
		if v, _ := a.Value(attribute.Key(attrErrorType)); v.AsString() != tt.errType {
			t.Errorf("%s: error.type = %q, want %q", tt.stage, v.AsString(), tt.errType)
		}
	}
	runs := spansNamed(p.spans, "run chain")
	stages := map[string]string{}
	for _, sp := range p.spans.Ended() {
		stages[sp.SpanContext().SpanID().String()] = sp.Name()
		if sp.Name() == "decode" && sp.Status().Code != codes.Error {
			t.Error("a failed stage has no Error status")
		}
	}
	if len(runs) != 2 || stages[runs[0].Parent().SpanID().String()] != "detect" {
		t.Fatalf("the first run is not a child of the detect stage")
	}
	rm := p.collect(t)
	if n := histCount(t, rm, "ortel.stage.duration", nil); n != 3 {
		t.Errorf("stage histogram count = %d, want 3", n)
	}
	failed := histCount(t, rm, "ortel.stage.duration", func(s attribute.Set) bool {
		_, ok := s.Value(attribute.Key(attrErrorType))
		return ok
	})
	if failed != 2 {
		t.Errorf("failed stages in the histogram = %d, want 2", failed)
	}
}

func TestStageQueueWait(t *testing.T) {
	p := newProviders(t)
	pl := NewPipeline("frames", p.opts()...)
	ctx, parent := p.tp.Tracer("test").Start(context.Background(), "frame")
	queued := time.Now().Add(-20 * time.Millisecond)
	_, st := pl.StartStageQueued(ctx, "detect", queued)
	st.End(nil)
	_, st = pl.StartStageQueued(ctx, "detect", time.Time{}) // no wait known
	st.End(nil)
	parent.End()

	qs := spansNamed(p.spans, "queue detect")
	if len(qs) != 1 {
		t.Fatalf("%d queue spans, want 1 (none for a zero queuedAt)", len(qs))
	}
	q, stage := qs[0], spansNamed(p.spans, "detect")[0]
	if !q.StartTime().Equal(queued) || q.EndTime().After(stage.StartTime()) {
		t.Errorf("queue span %v–%v, want from queuedAt %v to no later than the stage start %v",
			q.StartTime(), q.EndTime(), queued, stage.StartTime())
	}
	if q.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Error("the queue span is not a sibling of the stage")
	}
	rm := p.collect(t)
	if n := histCount(t, rm, "ortel.stage.queue.duration", nil); n != 1 {
		t.Errorf("queue histogram count = %d, want 1", n)
	}
	m, _ := metricByName(rm, "ortel.stage.queue.duration")
	if dp := m.Data.(metricdata.Histogram[float64]).DataPoints[0]; dp.Sum < 0.020 {
		t.Errorf("recorded wait %v s, want at least 0.020", dp.Sum)
	}
}
