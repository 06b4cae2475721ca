package profimport

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// ClientSink sends each batch through an OTLP trace client (such as
// otlptracegrpc's, which retries what the collector may accept later) and
// returns when the collector acknowledged it, so a slow collector slows the
// import instead of losing spans.
type ClientSink struct {
	client otlptrace.Client
	name   string
	res    *resourcepb.Resource
	scope  *commonpb.InstrumentationScope
	schema string
}

// NewClientSink starts client and returns a sink sending to it; name (the
// endpoint) names it in errors.
func NewClientSink(ctx context.Context, client otlptrace.Client, name string, res *resource.Resource, scope instrumentation.Scope) (*ClientSink, error) {
	if err := client.Start(ctx); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", name, err)
	}
	s := &ClientSink{client: client, name: name, res: &resourcepb.Resource{},
		scope: &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version}}
	if res != nil {
		s.res.Attributes = protoAttrs(res.Attributes())
		s.schema = res.SchemaURL()
	}
	return s, nil
}

// Write sends the batch as one request and waits for its acknowledgement.
func (s *ClientSink) Write(ctx context.Context, batch []Span) error {
	if len(batch) == 0 {
		return nil
	}
	spans := make([]*tracepb.Span, len(batch))
	for i := range batch {
		sp := &batch[i]
		ps := &tracepb.Span{
			TraceId:           append([]byte(nil), sp.TraceID[:]...),
			SpanId:            append([]byte(nil), sp.SpanID[:]...),
			Name:              sp.Name,
			Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
			StartTimeUnixNano: uint64(sp.Start),
			EndTimeUnixNano:   uint64(sp.End),
			Attributes:        protoAttrs(sp.Attrs),
			Status:            &tracepb.Status{},
		}
		if sp.Parent.IsValid() {
			ps.ParentSpanId = append([]byte(nil), sp.Parent[:]...)
		}
		spans[i] = ps
	}
	rs := []*tracepb.ResourceSpans{{
		Resource:   s.res,
		SchemaUrl:  s.schema,
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: s.scope, Spans: spans}},
	}}
	if err := s.client.UploadTraces(ctx, rs); err != nil {
		return fmt.Errorf("send %d spans to %s: %w", len(batch), s.name, err)
	}
	return nil
}

// Close stops the client.
func (s *ClientSink) Close() error {
	if err := s.client.Stop(context.Background()); err != nil {
		return fmt.Errorf("close the connection to %s: %w", s.name, err)
	}
	return nil
}

func protoAttrs(attrs []attribute.KeyValue) []*commonpb.KeyValue {
	out := make([]*commonpb.KeyValue, len(attrs))
	for i, kv := range attrs {
		out[i] = &commonpb.KeyValue{Key: string(kv.Key), Value: protoValue(kv.Value)}
	}
	return out
}

func protoValue(v attribute.Value) *commonpb.AnyValue {
	arr := func(n int, at func(int) *commonpb.AnyValue) *commonpb.AnyValue {
		vs := make([]*commonpb.AnyValue, n)
		for i := range vs {
			vs[i] = at(i)
		}
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
	}
	switch v.Type() {
	case attribute.BOOL:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}}
	case attribute.INT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}}
	case attribute.FLOAT64:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}}
	case attribute.STRING:
		return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v.AsString()}}
	case attribute.BOOLSLICE:
		s := v.AsBoolSlice()
		return arr(len(s), func(i int) *commonpb.AnyValue { return protoValue(attribute.BoolValue(s[i])) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return arr(len(s), func(i int) *commonpb.AnyValue { return protoValue(attribute.Int64Value(s[i])) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return arr(len(s), func(i int) *commonpb.AnyValue { return protoValue(attribute.Float64Value(s[i])) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return arr(len(s), func(i int) *commonpb.AnyValue { return protoValue(attribute.StringValue(s[i])) })
	}
	return &commonpb.AnyValue{}
}
