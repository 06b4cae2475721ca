package telemetry

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
)

// This file converts the SDK's metricdata into OTLP protobuf messages for
// the file exporter, field for field as the SDK's OTLP exporters do (a test
// compares the two on the same data).

// resourceMetricsToProto converts rm. A metric of an unknown kind or with
// an unknown temporality is left out and reported in the error; the rest
// is converted.
func resourceMetricsToProto(rm *metricdata.ResourceMetrics) (*metricspb.ResourceMetrics, error) {
	var errs []error
	out := &metricspb.ResourceMetrics{
		Resource:  &resourcepb.Resource{Attributes: attrsToProto(rm.Resource.Iter())},
		SchemaUrl: rm.Resource.SchemaURL(),
	}
	out.ScopeMetrics = make([]*metricspb.ScopeMetrics, 0, len(rm.ScopeMetrics))
	for _, sm := range rm.ScopeMetrics {
		psm := &metricspb.ScopeMetrics{
			Scope: &commonpb.InstrumentationScope{
				Name:       sm.Scope.Name,
				Version:    sm.Scope.Version,
				Attributes: attrsToProto(sm.Scope.Attributes.Iter()),
			},
			SchemaUrl: sm.Scope.SchemaURL,
			Metrics:   make([]*metricspb.Metric, 0, len(sm.Metrics)),
		}
		for _, m := range sm.Metrics {
			pm, err := metricToProto(m)
			if err != nil {
				errs = append(errs, fmt.Errorf("metric %q: %w", m.Name, err))
				continue
			}
			psm.Metrics = append(psm.Metrics, pm)
		}
		out.ScopeMetrics = append(out.ScopeMetrics, psm)
	}
	return out, errors.Join(errs...)
}

func metricToProto(m metricdata.Metrics) (*metricspb.Metric, error) {
	out := &metricspb.Metric{Name: m.Name, Description: m.Description, Unit: m.Unit}
	var err error
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		out.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: numberPoints(d.DataPoints)}}
	case metricdata.Gauge[float64]:
		out.Data = &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: numberPoints(d.DataPoints)}}
	case metricdata.Sum[int64]:
		out.Data, err = sumToProto(d)
	case metricdata.Sum[float64]:
		out.Data, err = sumToProto(d)
	case metricdata.Histogram[int64]:
		out.Data, err = histogramToProto(d)
	case metricdata.Histogram[float64]:
		out.Data, err = histogramToProto(d)
	case metricdata.ExponentialHistogram[int64]:
		out.Data, err = expHistogramToProto(d)
	case metricdata.ExponentialHistogram[float64]:
		out.Data, err = expHistogramToProto(d)
	case metricdata.Summary:
		out.Data = &metricspb.Metric_Summary{Summary: &metricspb.Summary{DataPoints: summaryPoints(d.DataPoints)}}
	default:
		return nil, fmt.Errorf("unknown aggregation %T", d)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

func temporalityToProto(t metricdata.Temporality) (metricspb.AggregationTemporality, error) {
	switch t {
	case metricdata.CumulativeTemporality:
		return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE, nil
	case metricdata.DeltaTemporality:
		return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, nil
	}
	return metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_UNSPECIFIED, fmt.Errorf("unknown temporality %v", t)
}

func sumToProto[N int64 | float64](s metricdata.Sum[N]) (*metricspb.Metric_Sum, error) {
	t, err := temporalityToProto(s.Temporality)
	if err != nil {
		return nil, err
	}
	return &metricspb.Metric_Sum{Sum: &metricspb.Sum{
		AggregationTemporality: t,
		IsMonotonic:            s.IsMonotonic,
		DataPoints:             numberPoints(s.DataPoints),
	}}, nil
}

func numberPoints[N int64 | float64](pts []metricdata.DataPoint[N]) []*metricspb.NumberDataPoint {
	out := make([]*metricspb.NumberDataPoint, 0, len(pts))
	for _, p := range pts {
		dp := &metricspb.NumberDataPoint{
			Attributes:        attrsToProto(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Exemplars:         exemplarsToProto(p.Exemplars),
		}
		switch v := any(p.Value).(type) {
		case int64:
			dp.Value = &metricspb.NumberDataPoint_AsInt{AsInt: v}
		case float64:
			dp.Value = &metricspb.NumberDataPoint_AsDouble{AsDouble: v}
		}
		out = append(out, dp)
	}
	return out
}

func histogramToProto[N int64 | float64](h metricdata.Histogram[N]) (*metricspb.Metric_Histogram, error) {
	t, err := temporalityToProto(h.Temporality)
	if err != nil {
		return nil, err
	}
	pts := make([]*metricspb.HistogramDataPoint, 0, len(h.DataPoints))
	for _, p := range h.DataPoints {
		sum := float64(p.Sum)
		dp := &metricspb.HistogramDataPoint{
			Attributes:        attrsToProto(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               &sum,
			BucketCounts:      p.BucketCounts,
			ExplicitBounds:    p.Bounds,
			Exemplars:         exemplarsToProto(p.Exemplars),
		}
		dp.Min, dp.Max = extremum(p.Min), extremum(p.Max)
		pts = append(pts, dp)
	}
	return &metricspb.Metric_Histogram{Histogram: &metricspb.Histogram{AggregationTemporality: t, DataPoints: pts}}, nil
}

func expHistogramToProto[N int64 | float64](h metricdata.ExponentialHistogram[N]) (*metricspb.Metric_ExponentialHistogram, error) {
	t, err := temporalityToProto(h.Temporality)
	if err != nil {
		return nil, err
	}
	pts := make([]*metricspb.ExponentialHistogramDataPoint, 0, len(h.DataPoints))
	for _, p := range h.DataPoints {
		sum := float64(p.Sum)
		dp := &metricspb.ExponentialHistogramDataPoint{
			Attributes:        attrsToProto(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               &sum,
			Scale:             p.Scale,
			ZeroCount:         p.ZeroCount,
			ZeroThreshold:     p.ZeroThreshold,
			Positive:          &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: p.PositiveBucket.Offset, BucketCounts: p.PositiveBucket.Counts},
			Negative:          &metricspb.ExponentialHistogramDataPoint_Buckets{Offset: p.NegativeBucket.Offset, BucketCounts: p.NegativeBucket.Counts},
			Exemplars:         exemplarsToProto(p.Exemplars),
		}
		dp.Min, dp.Max = extremum(p.Min), extremum(p.Max)
		pts = append(pts, dp)
	}
	return &metricspb.Metric_ExponentialHistogram{ExponentialHistogram: &metricspb.ExponentialHistogram{
		AggregationTemporality: t, DataPoints: pts,
	}}, nil
}

// extremum converts a histogram minimum or maximum: nil when it was not
// recorded.
func extremum[N int64 | float64](e metricdata.Extrema[N]) *float64 {
	v, ok := e.Value()
	if !ok {
		return nil
	}
	f := float64(v)
	return &f
}

func summaryPoints(pts []metricdata.SummaryDataPoint) []*metricspb.SummaryDataPoint {
	out := make([]*metricspb.SummaryDataPoint, 0, len(pts))
	for _, p := range pts {
		qs := make([]*metricspb.SummaryDataPoint_ValueAtQuantile, 0, len(p.QuantileValues))
		for _, q := range p.QuantileValues {
			qs = append(qs, &metricspb.SummaryDataPoint_ValueAtQuantile{Quantile: q.Quantile, Value: q.Value})
		}
		out = append(out, &metricspb.SummaryDataPoint{
			Attributes:        attrsToProto(p.Attributes.Iter()),
			StartTimeUnixNano: unixNano(p.StartTime),
			TimeUnixNano:      unixNano(p.Time),
			Count:             p.Count,
			Sum:               p.Sum,
			QuantileValues:    qs,
		})
	}
	return out
}

func exemplarsToProto[N int64 | float64](exs []metricdata.Exemplar[N]) []*metricspb.Exemplar {
	if len(exs) == 0 {
		return nil
	}
	out := make([]*metricspb.Exemplar, 0, len(exs))
	for _, x := range exs {
		e := &metricspb.Exemplar{
			FilteredAttributes: kvsToProto(x.FilteredAttributes),
			TimeUnixNano:       unixNano(x.Time),
			TraceId:            x.TraceID,
			SpanId:             x.SpanID,
		}
		switch v := any(x.Value).(type) {
		case int64:
			e.Value = &metricspb.Exemplar_AsInt{AsInt: v}
		case float64:
			e.Value = &metricspb.Exemplar_AsDouble{AsDouble: v}
		}
		out = append(out, e)
	}
	return out
}

// unixNano returns t in nanoseconds since the Unix epoch; 0 for the zero
// time and anything before 1970.
func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(max(0, t.UnixNano()))
}

func attrsToProto(it attribute.Iterator) []*commonpb.KeyValue {
	if it.Len() == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, it.Len())
	for it.Next() {
		kv := it.Attribute()
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: valueToProto(kv.Value)})
	}
	return out
}

func kvsToProto(kvs []attribute.KeyValue) []*commonpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]*commonpb.KeyValue, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, &commonpb.KeyValue{Key: string(kv.Key), Value: valueToProto(kv.Value)})
	}
	return out
}

func valueToProto(v attribute.Value) *commonpb.AnyValue {
	av := &commonpb.AnyValue{}
	switch v.Type() {
	case attribute.BOOL:
		av.Value = &commonpb.AnyValue_BoolValue{BoolValue: v.AsBool()}
	case attribute.INT64:
		av.Value = &commonpb.AnyValue_IntValue{IntValue: v.AsInt64()}
	case attribute.FLOAT64:
		av.Value = &commonpb.AnyValue_DoubleValue{DoubleValue: v.AsFloat64()}
	case attribute.STRING:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: v.AsString()}
	case attribute.BYTESLICE:
		av.Value = &commonpb.AnyValue_BytesValue{BytesValue: v.AsByteSlice()}
	case attribute.BOOLSLICE:
		av.Value = arrayValue(v.AsBoolSlice(), func(b bool) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
		})
	case attribute.INT64SLICE:
		av.Value = arrayValue(v.AsInt64Slice(), func(n int64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
		})
	case attribute.FLOAT64SLICE:
		av.Value = arrayValue(v.AsFloat64Slice(), func(f float64) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
		})
	case attribute.STRINGSLICE:
		av.Value = arrayValue(v.AsStringSlice(), func(s string) *commonpb.AnyValue {
			return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
		})
	case attribute.SLICE:
		av.Value = arrayValue(v.AsSlice(), valueToProto)
	case attribute.MAP:
		av.Value = &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvsToProto(v.AsMap())}}
	case attribute.EMPTY:
		// An empty value: AnyValue with nothing set.
	default:
		av.Value = &commonpb.AnyValue_StringValue{StringValue: "INVALID"}
	}
	return av
}

func arrayValue[T any](vals []T, conv func(T) *commonpb.AnyValue) *commonpb.AnyValue_ArrayValue {
	out := make([]*commonpb.AnyValue, len(vals))
	for i, v := range vals {
		out[i] = conv(v)
	}
	return &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: out}}
}
