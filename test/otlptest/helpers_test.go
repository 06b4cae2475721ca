package otlptest

import (
	"slices"
	"testing"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

var testAttrs = []*commonpb.KeyValue{
	kv("s", &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "text"}}),
	kv("i", &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -7}}),
	kv("f", &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 2.5}}),
	kv("b", &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}),
	kv("ss", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
		{Value: &commonpb.AnyValue_StringValue{StringValue: "x"}}, {Value: &commonpb.AnyValue_StringValue{StringValue: "y"}},
	}}}}),
	kv("mixed", &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: []*commonpb.AnyValue{
		{Value: &commonpb.AnyValue_StringValue{StringValue: "x"}}, {Value: &commonpb.AnyValue_IntValue{IntValue: 1}},
	}}}}),
}

func TestAttrHelpers(t *testing.T) {
	pair := func(v any, ok bool) [2]any { return [2]any{v, ok} }
	tests := []struct {
		name      string
		got, want [2]any
	}{
		{"string", pair(AttrString(testAttrs, "s")), pair("text", true)},
		{"string of an int", pair(AttrString(testAttrs, "i")), pair("", false)},
		{"string missing", pair(AttrString(testAttrs, "missing")), pair("", false)},
		{"int", pair(AttrInt(testAttrs, "i")), pair(int64(-7), true)},
		{"int of a double", pair(AttrInt(testAttrs, "f")), pair(int64(0), false)},
		{"float", pair(AttrFloat(testAttrs, "f")), pair(2.5, true)},
		{"float of an int", pair(AttrFloat(testAttrs, "i")), pair(0.0, false)},
		{"bool", pair(AttrBool(testAttrs, "b")), pair(true, true)},
		{"bool of a string", pair(AttrBool(testAttrs, "s")), pair(false, false)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	t.Run("strings", func(t *testing.T) {
		if v, ok := AttrStrings(testAttrs, "ss"); !ok || !slices.Equal(v, []string{"x", "y"}) {
			t.Errorf("got %v, %v", v, ok)
		}
		if v, ok := AttrStrings(testAttrs, "mixed"); ok {
			t.Errorf("mixed array accepted as strings: %v", v)
		}
		if _, ok := AttrStrings(testAttrs, "s"); ok {
			t.Error("a string accepted as a string array")
		}
	})
}

func TestSpanHelpers(t *testing.T) {
	res := &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
		kv("service.name", &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: "svc"}}),
	}}
	tid := []byte{0xAB, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	other := []byte{0xCD, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	root := Span{Resource: res, Span: &tracepb.Span{Name: "root", TraceId: tid, SpanId: []byte{0xAA, 0, 0, 0, 0, 0, 0, 1}}}
	kid := Span{Resource: res, Span: &tracepb.Span{Name: "kid", TraceId: tid, SpanId: []byte{0, 0, 0, 0, 0, 0, 0, 2}, ParentSpanId: root.GetSpanId()}}
	// Same parent span id in another trace: not a child of root.
	stranger := Span{Span: &tracepb.Span{Name: "kid", TraceId: other, SpanId: []byte{0, 0, 0, 0, 0, 0, 0, 3}, ParentSpanId: root.GetSpanId()}}
	spans := []Span{root, kid, stranger}

	if got := root.TraceID(); got != "ab0102030405060708090a0b0c0d0e0f" {
		t.Errorf("TraceID() = %s", got)
	}
	if got := kid.ParentSpanID(); got != "aa00000000000001" {
		t.Errorf("ParentSpanID() = %s", got)
	}
	if got := root.ParentSpanID(); got != "" {
		t.Errorf("root ParentSpanID() = %q", got)
	}
	if got := kid.ServiceName(); got != "svc" {
		t.Errorf("ServiceName() = %q", got)
	}
	if s, ok := SpanByID(spans, "AA00000000000001"); !ok || s.GetName() != "root" {
		t.Errorf("SpanByID upper-case = %v, %v", s.Span, ok)
	}
	if _, ok := SpanByID(spans, "ffffffffffffffff"); ok {
		t.Error("SpanByID found a missing id")
	}
	if got := Children(spans, root); len(got) != 1 || got[0].SpanID() != kid.SpanID() {
		t.Errorf("Children(root) = %v", got)
	}
	if got := SpansNamed(spans, "kid"); len(got) != 2 {
		t.Errorf("SpansNamed(kid) = %d spans", len(got))
	}
	if !HasSpanNamed("root")(spans) || HasSpanNamed("nope")(spans) {
		t.Error("HasSpanNamed wrong")
	}
	if !HasSpans(3)(spans) || HasSpans(4)(spans) {
		t.Error("HasSpans wrong")
	}
}
