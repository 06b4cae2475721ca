package otlptest

import (
	"encoding/hex"
	"strings"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
)

// HexID returns an id as lowercase hex, the form OTLP JSON, Jaeger and the
// OTel API's String methods use ("" for an empty id).
func HexID(id []byte) string { return hex.EncodeToString(id) }

// TraceID returns the span's trace id as lowercase hex.
func (s Span) TraceID() string { return HexID(s.GetTraceId()) }

// SpanID returns the span's id as lowercase hex.
func (s Span) SpanID() string { return HexID(s.GetSpanId()) }

// ParentSpanID returns the span's parent id as lowercase hex, "" for a root.
func (s Span) ParentSpanID() string { return HexID(s.GetParentSpanId()) }

// ServiceName returns the service.name attribute of the span's resource.
func (s Span) ServiceName() string {
	v, _ := AttrString(s.Resource.GetAttributes(), "service.name")
	return v
}

// SpanByID returns the span whose id is the hex string id (either case).
func SpanByID(spans []Span, id string) (Span, bool) {
	id = strings.ToLower(id)
	for _, s := range spans {
		if s.SpanID() == id {
			return s, true
		}
	}
	return Span{}, false
}

// SpansNamed returns the spans called name, in order.
func SpansNamed(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.GetName() == name {
			out = append(out, s)
		}
	}
	return out
}

// Children returns the spans whose parent is parent, in order.
func Children(spans []Span, parent Span) []Span {
	var out []Span
	for _, s := range spans {
		if s.ParentSpanID() == parent.SpanID() && s.TraceID() == parent.TraceID() {
			out = append(out, s)
		}
	}
	return out
}

// HasSpanNamed returns a WaitSpans predicate: at least one span called name.
func HasSpanNamed(name string) func([]Span) bool {
	return func(spans []Span) bool { return len(SpansNamed(spans, name)) > 0 }
}

// HasSpans returns a WaitSpans predicate: at least n spans.
func HasSpans(n int) func([]Span) bool {
	return func(spans []Span) bool { return len(spans) >= n }
}

// HasMetric returns a WaitMetrics predicate: the metric name arrived.
func HasMetric(name string) func(*Receiver) bool {
	return func(r *Receiver) bool { return len(r.Metric(name)) > 0 }
}

// Attr returns the value of the attribute key.
func Attr(attrs []*commonpb.KeyValue, key string) (*commonpb.AnyValue, bool) {
	for _, kv := range attrs {
		if kv.GetKey() == key {
			return kv.GetValue(), true
		}
	}
	return nil, false
}

// AttrString returns the string attribute key; false when it is missing or
// not a string.
func AttrString(attrs []*commonpb.KeyValue, key string) (string, bool) {
	v, ok := Attr(attrs, key)
	if !ok {
		return "", false
	}
	sv, ok := v.GetValue().(*commonpb.AnyValue_StringValue)
	if !ok {
		return "", false
	}
	return sv.StringValue, true
}

// AttrInt returns the integer attribute key; false when it is missing or
// not an integer.
func AttrInt(attrs []*commonpb.KeyValue, key string) (int64, bool) {
	v, ok := Attr(attrs, key)
	if !ok {
		return 0, false
	}
	iv, ok := v.GetValue().(*commonpb.AnyValue_IntValue)
	if !ok {
		return 0, false
	}
	return iv.IntValue, true
}

// AttrFloat returns the double attribute key; false when it is missing or
// not a double.
func AttrFloat(attrs []*commonpb.KeyValue, key string) (float64, bool) {
	v, ok := Attr(attrs, key)
	if !ok {
		return 0, false
	}
	dv, ok := v.GetValue().(*commonpb.AnyValue_DoubleValue)
	if !ok {
		return 0, false
	}
	return dv.DoubleValue, true
}

// AttrBool returns the boolean attribute key; false when it is missing or
// not a boolean.
func AttrBool(attrs []*commonpb.KeyValue, key string) (value, ok bool) {
	v, found := Attr(attrs, key)
	if !found {
		return false, false
	}
	bv, isBool := v.GetValue().(*commonpb.AnyValue_BoolValue)
	if !isBool {
		return false, false
	}
	return bv.BoolValue, true
}

// AttrStrings returns the string-array attribute key; false when it is
// missing, not an array, or holds a non-string.
func AttrStrings(attrs []*commonpb.KeyValue, key string) ([]string, bool) {
	v, ok := Attr(attrs, key)
	if !ok {
		return nil, false
	}
	av, ok := v.GetValue().(*commonpb.AnyValue_ArrayValue)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(av.ArrayValue.GetValues()))
	for _, e := range av.ArrayValue.GetValues() {
		sv, ok := e.GetValue().(*commonpb.AnyValue_StringValue)
		if !ok {
			return nil, false
		}
		out = append(out, sv.StringValue)
	}
	return out, true
}
