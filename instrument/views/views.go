// Package views holds the SDK-side configuration that goes with package
// instrument: views that make ortel's duration histograms base-2 exponential.
//
// Package instrument uses the OpenTelemetry API only, which can advise
// explicit bucket boundaries but cannot ask for an exponential histogram;
// that is the SDK's choice, made with these views:
//
//	mp := sdkmetric.NewMeterProvider(
//		sdkmetric.WithReader(reader),
//		sdkmetric.WithView(views.FromEnv()...),
//	)
//
// Exponential histograms give precise percentiles (p99, p99.9) at any scale
// without choosing buckets. Prometheus 2.x scraping the collector's
// Prometheus exporter needs classic buckets instead: set
// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=explicit_bucket_histogram
// and FromEnv returns no views, so the advised boundaries apply.
package views

import (
	"os"
	"strings"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ortel-dev/ortel/semconv"
)

// EnvHistogramAggregation is the standard OpenTelemetry variable choosing
// the default histogram aggregation of the OTLP metric exporters.
const EnvHistogramAggregation = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"

// Histograms lists the duration histograms the views apply to.
var Histograms = []string{
	semconv.OnnxruntimeRunDurationName,
	semconv.OnnxruntimeNodeDurationName,
	semconv.OnnxruntimeSessionCreationDurationName,
	semconv.OrtelStageDurationName,
}

// MaxSize and MaxScale of the exponential histograms: 160 buckets at scale
// 20 (refined down as needed) keep ~4% relative error over six decades.
const (
	MaxSize  = 160
	MaxScale = 20
)

// Exponential returns views making every histogram in Histograms a base-2
// exponential histogram.
func Exponential() []sdkmetric.View {
	out := make([]sdkmetric.View, 0, len(Histograms))
	for _, name := range Histograms {
		out = append(out, sdkmetric.NewView(
			sdkmetric.Instrument{Name: name},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{
				MaxSize:  MaxSize,
				MaxScale: MaxScale,
			}},
		))
	}
	return out
}

// FromEnv returns Exponential unless EnvHistogramAggregation asks for
// explicit_bucket_histogram, in which case it returns nil.
func FromEnv() []sdkmetric.View {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvHistogramAggregation)), "explicit_bucket_histogram") {
		return nil
	}
	return Exponential()
}
