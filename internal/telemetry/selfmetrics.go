package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/semconv"
)

// selfMeterName is the scope of ortel's metrics about its own telemetry.
const selfMeterName = "github.com/ortel-dev/ortel/internal/telemetry"

// registerSelfMetrics exports what the pipeline could not deliver, from
// the same counters as Stats: spans dropped (when spans are exported) and
// spans and metric exports spooled (when there is a spool for them). They
// leave with the next export that succeeds, or with the spool through
// `ortel replay`, so an alert can see an outage after it ended.
func (t *Telemetry) registerSelfMetrics(spans bool) error {
	m := t.MeterProvider.Meter(selfMeterName)
	st := t.stats
	var insts []metric.Observable
	var errs []error
	var dropped, spooled, metricSpooled metric.Int64ObservableCounter
	if spans {
		c, err := semconv.NewOrtelTelemetrySpansDropped(m)
		dropped = c
		insts, errs = append(insts, c), append(errs, err)
	}
	if t.spools[0] != nil {
		c, err := semconv.NewOrtelTelemetrySpansSpooled(m)
		spooled = c
		insts, errs = append(insts, c), append(errs, err)
	}
	if t.spools[1] != nil {
		c, err := semconv.NewOrtelTelemetryMetricExportsSpooled(m)
		metricSpooled = c
		insts, errs = append(insts, c), append(errs, err)
	}
	if err := errors.Join(errs...); err != nil || len(insts) == 0 {
		return err
	}
	queueFull := metric.WithAttributeSet(attribute.NewSet(semconv.ErrorType("queue_full")))
	exportFailed := metric.WithAttributeSet(attribute.NewSet(semconv.ErrorType("export_failed")))
	_, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if dropped != nil {
			o.ObserveInt64(dropped, st.spansQueueFull.Load(), queueFull)
			o.ObserveInt64(dropped, st.spansFailed.Load(), exportFailed)
		}
		if spooled != nil {
			o.ObserveInt64(spooled, st.spansSpooled.Load())
		}
		if metricSpooled != nil {
			o.ObserveInt64(metricSpooled, st.metricSpooled.Load())
		}
		return nil
	}, insts...)
	return err
}
