package otlpjson

import (
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Fixed ids and times, so golden files are stable.
var (
	traceID  = []byte{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c}
	spanID   = []byte{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74}
	parentID = []byte{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x73}
	linkTID  = []byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}
	linkSID  = []byte{0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8}
)

const t0 = uint64(1544712660000000000)

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func resource(service string) *resourcepb.Resource {
	return &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", service)}}
}

// sampleTraces holds every field kind a span has: ids (also in a link),
// all attribute value types, events, status, enums, flags, 64-bit times.
func sampleTraces(service string) *coltracepb.ExportTraceServiceRequest {
	attrs := []*commonpb.KeyValue{
		str("onnxruntime.model.name", "det <&> \"quoted\"\n"),
		// an attribute whose key and value look like an id field: must stay as is
		str("traceId", "7u6bfsPBsXQ="),
		{Key: "onnxruntime.batch_size", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: -9007199254740993}}},
		{Key: "ratio", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: 0.125}}},
		{Key: "ok", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: true}}},
		{Key: "raw", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 2, 0xff}}}},
		{Key: "shapes", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{
			Values: []*commonpb.AnyValue{{Value: &commonpb.AnyValue_StringValue{StringValue: "float[1,3,640,640]"}}},
		}}}},
		{Key: "map", Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{
			Values: []*commonpb.KeyValue{str("spanId", "not an id")},
		}}}},
	}
	return &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: resource(service),
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "github.com/ortel-dev/ortel/instrument", Version: "0.1.0"},
			Spans: []*tracepb.Span{
				{
					TraceId:           traceID,
					SpanId:            spanID,
					ParentSpanId:      parentID,
					TraceState:        "k=v",
					Flags:             0x101,
					Name:              "onnxruntime.run",
					Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
					StartTimeUnixNano: t0,
					EndTimeUnixNano:   t0 + 1500,
					Attributes:        attrs,
					Events: []*tracepb.Span_Event{{
						TimeUnixNano: t0 + 10, Name: "exception", Attributes: []*commonpb.KeyValue{str("exception.message", "boom")},
					}},
					Links: []*tracepb.Span_Link{{
						TraceId: linkTID, SpanId: linkSID, Attributes: []*commonpb.KeyValue{str("link", "1")},
					}},
					Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "failed"},
				},
				{
					TraceId:           traceID,
					SpanId:            parentID,
					Name:              "ortel.stage",
					Kind:              tracepb.Span_SPAN_KIND_SERVER,
					StartTimeUnixNano: t0 - 100,
					EndTimeUnixNano:   t0 + 2000,
				},
			},
		}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.26.0",
	}}}
}

// sampleMetrics holds every metric data kind, with an exemplar carrying ids.
func sampleMetrics(service string) *colmetricspb.ExportMetricsServiceRequest {
	sum, minV, maxV := 3.5, 0.5, 2.0
	ex := []*metricspb.Exemplar{{
		FilteredAttributes: []*commonpb.KeyValue{str("user", "x")},
		TimeUnixNano:       t0 + 5,
		Value:              &metricspb.Exemplar_AsDouble{AsDouble: 1.25},
		TraceId:            traceID,
		SpanId:             spanID,
	}}
	attrs := []*commonpb.KeyValue{str("onnxruntime.model.name", "det")}
	cum := metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE
	return &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{{
		Resource: resource(service),
		ScopeMetrics: []*metricspb.ScopeMetrics{{
			Scope: &commonpb.InstrumentationScope{Name: "github.com/ortel-dev/ortel/receivers/hostcpu"},
			Metrics: []*metricspb.Metric{
				{Name: "hw.temperature", Unit: "Cel", Description: "temperature", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{
					DataPoints: []*metricspb.NumberDataPoint{{Attributes: attrs, TimeUnixNano: t0, Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: 41.5}}},
				}}},
				{Name: "onnxruntime.runs", Unit: "{run}", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{
					AggregationTemporality: cum, IsMonotonic: true,
					DataPoints: []*metricspb.NumberDataPoint{{Attributes: attrs, StartTimeUnixNano: t0, TimeUnixNano: t0 + 1, Value: &metricspb.NumberDataPoint_AsInt{AsInt: 1 << 60}}},
				}}},
				{Name: "onnxruntime.run.duration", Unit: "s", Data: &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{
					AggregationTemporality: cum,
					DataPoints: []*metricspb.HistogramDataPoint{{
						Attributes: attrs, StartTimeUnixNano: t0, TimeUnixNano: t0 + 1, Count: 3, Sum: &sum,
						BucketCounts: []uint64{1, 1, 1}, ExplicitBounds: []float64{1, 2}, Exemplars: ex, Min: &minV, Max: &maxV,
					}},
				}}},
				{Name: "onnxruntime.node.duration", Unit: "s", Data: &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
					AggregationTemporality: cum,
					DataPoints: []*metricspb.ExponentialHistogramDataPoint{{
						Attributes: attrs, StartTimeUnixNano: t0, TimeUnixNano: t0 + 1, Count: 4, Sum: &sum, Scale: -2,
						ZeroCount: 1, ZeroThreshold: 1e-9,
						Positive:  &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: -3, BucketCounts: []uint64{1, 2}},
						Negative:  &metricspb.ExponentialHistogramDataPoint_Buckets{},
						Exemplars: ex, Min: &minV, Max: &maxV,
					}},
				}}},
				{Name: "legacy.summary", Unit: "s", Data: &metricspb.Metric_Summary{Summary: &metricspb.Summary{
					DataPoints: []*metricspb.SummaryDataPoint{{
						StartTimeUnixNano: t0, TimeUnixNano: t0 + 1, Count: 2, Sum: 3,
						QuantileValues: []*metricspb.SummaryDataPoint_ValueAtQuantile{{Quantile: 0.5, Value: 1}, {Quantile: 1, Value: 2}},
					}},
				}}},
			},
		}},
	}}}
}
