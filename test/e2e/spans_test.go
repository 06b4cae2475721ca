package e2e

import (
	"bytes"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/test/otlptest"
)

func span(trace, id, parent byte, name string, start, end uint64, attrs ...*commonpb.KeyValue) otlptest.Span {
	s := &tracepb.Span{
		TraceId:           []byte{trace, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		SpanId:            []byte{id, 0, 0, 0, 0, 0, 0, 1},
		Name:              name,
		StartTimeUnixNano: start,
		EndTimeUnixNano:   end,
		Attributes:        attrs,
	}
	if parent != 0 {
		s.ParentSpanId = []byte{parent, 0, 0, 0, 0, 0, 0, 1}
	}
	return otlptest.Span{Span: s}
}

func boolAttr(k string, v bool) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v}}}
}

func strAttr(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func TestCheckSpanTree(t *testing.T) {
	profiled := boolAttr(attrRunProfiled, true)
	plain := boolAttr(attrRunProfiled, false)
	conv := strAttr(attrNodeOpType, "Conv")
	relu := strAttr(attrNodeOpType, "Relu")
	good := []otlptest.Span{
		span(1, 1, 0, "run det", 100, 200, profiled),
		span(1, 2, 1, "Conv", 110, 150, conv),
		span(1, 3, 1, "Relu", 150, 200, relu),
		span(2, 4, 0, "run det", 300, 400, plain),
		span(2, 9, 0, "create_session det", 0, 50),
	}
	tests := []struct {
		name    string
		spans   []otlptest.Span
		tol     time.Duration
		want    SpanTree
		wantErr []string
	}{
		{
			name:  "sound",
			spans: good,
			want:  SpanTree{Runs: 2, ProfiledRuns: 1, Operators: 2, OpTypes: map[string]int{"Conv": 1, "Relu": 1}},
		},
		{
			name:    "outside the run",
			spans:   append(good[:3:3], span(1, 5, 1, "Conv", 90, 120, conv)),
			want:    SpanTree{Runs: 1, ProfiledRuns: 1, Operators: 3, OpTypes: map[string]int{"Conv": 2, "Relu": 1}},
			wantErr: []string{"lies outside its run"},
		},
		{
			name:  "outside but within tolerance",
			spans: append(good[:3:3], span(1, 5, 1, "Conv", 95, 205, conv)),
			tol:   5,
			want:  SpanTree{Runs: 1, ProfiledRuns: 1, Operators: 3, OpTypes: map[string]int{"Conv": 2, "Relu": 1}},
		},
		{
			name: "bad parents",
			spans: []otlptest.Span{
				span(1, 1, 0, "run det", 100, 200, profiled),
				span(2, 4, 0, "run det", 100, 200, plain),
				span(1, 6, 0, "Conv", 110, 120, conv),  // root
				span(1, 7, 8, "Conv", 110, 120, conv),  // parent missing
				span(3, 2, 1, "Conv", 110, 120, conv),  // parent in another trace
				span(1, 3, 9, "Conv", 110, 120, conv),  // parent is not a run (below)
				span(1, 9, 0, "stage", 100, 200),       // not a run
				span(2, 5, 4, "Relu", 110, 120, relu),  // parent not profiled
				span(1, 10, 1, "Relu", 120, 110, relu), // ends before it starts
			},
			want: SpanTree{Runs: 2, ProfiledRuns: 1, Operators: 6, OpTypes: map[string]int{"Conv": 4, "Relu": 2}},
			wantErr: []string{"has no parent", "never arrived", "in another trace", "not a run span",
				"was not profiled", "ends before it starts"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := CheckSpanTree(tt.spans, tt.tol, 20)
			if got.Runs != tt.want.Runs || got.ProfiledRuns != tt.want.ProfiledRuns || got.Operators != tt.want.Operators || len(got.OpTypes) != len(tt.want.OpTypes) {
				t.Errorf("tree = %+v, want %+v", got, tt.want)
			}
			for op, n := range tt.want.OpTypes {
				if got.OpTypes[op] != n {
					t.Errorf("OpTypes[%s] = %d, want %d", op, got.OpTypes[op], n)
				}
			}
			if len(errs) != len(tt.wantErr) {
				t.Fatalf("errors = %q, want %d like %q", errs, len(tt.wantErr), tt.wantErr)
			}
			for i, w := range tt.wantErr {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestCheckSpanTreeCapsErrors(t *testing.T) {
	var spans []otlptest.Span
	for i := range 10 {
		spans = append(spans, span(1, byte(i+1), 0, "Conv", 1, 2, strAttr(attrNodeOpType, "Conv")))
	}
	_, errs := CheckSpanTree(spans, 0, 3)
	if len(errs) != 4 || !strings.Contains(errs[3].Error(), "and 7 more") {
		t.Errorf("errs = %q; want 3 and a count of the other 7", errs)
	}
}

func TestCheckPipelineTree(t *testing.T) {
	res := func(service string) *resourcepb.Resource {
		return &resourcepb.Resource{Attributes: []*commonpb.KeyValue{{Key: "service.name", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: service}}}}}
	}
	str := func(k, v string) *commonpb.KeyValue {
		return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
	}
	profiled := &commonpb.KeyValue{Key: "onnxruntime.run.profiled", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: false}}}
	mk := func(trace, id, parent byte, name string, attrs ...*commonpb.KeyValue) otlptest.Span {
		sp := &tracepb.Span{TraceId: bytes.Repeat([]byte{trace}, 16), SpanId: bytes.Repeat([]byte{id}, 8), Name: name, Attributes: attrs}
		if parent != 0 {
			sp.ParentSpanId = bytes.Repeat([]byte{parent}, 8)
		}
		return otlptest.Span{Resource: res(PipelineService), Span: sp}
	}
	var good []otlptest.Span
	for i := byte(1); i <= 3; i++ {
		base := i * 10
		good = append(good,
			mk(i, base, 0, "POST /ocr"),
			mk(i, base+1, base, "detect", str("ortel.stage.name", "detect")),
			mk(i, base+2, base+1, "run det", profiled))
	}
	if err := CheckPipelineTree(good, 3); err != nil {
		t.Fatalf("good tree: %v", err)
	}
	bad := append([]otlptest.Span(nil), good...)
	bad[2] = mk(1, 12, 10, "run det", profiled) // run directly under the request
	if err := CheckPipelineTree(bad, 3); err == nil {
		t.Error("a run outside any stage passed")
	}
	if err := CheckPipelineTree(good[:6], 3); err == nil {
		t.Error("two requests passed for three")
	}
	if err := CheckPipelineTree(good, 4); err == nil {
		t.Error("3 requests where 4 were made: want an error")
	}
	if err := CheckPipelineTree(nil, 3); err == nil {
		t.Error("no spans passed")
	}
}
