package bench

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	upstreamsemconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/semconv"
)

// ScopeName is the instrumentation scope of the bench's own metrics.
const ScopeName = "github.com/ortel-dev/ortel/internal/bench"

// metrics are the bench's instruments (see doc.go), created once per Run.
type metrics struct {
	model    attribute.KeyValue
	scenario attribute.KeyValue
	queued   bool // the scenario has a request queue

	requestDuration metric.Float64Histogram
	queueDepth      metric.Int64UpDownCounter
	queueWait       metric.Float64Histogram
	throughput      metric.Float64Gauge

	slaViolations metric.Int64Counter
	slaCompliance metric.Float64Gauge
	slaCapacity   metric.Float64Gauge

	warmupRuns     metric.Int64Gauge
	warmupDuration metric.Float64Histogram
	firstRun       metric.Float64Histogram
	sessionLoad    metric.Float64Histogram
	sessionInit    metric.Float64Histogram

	jitterStd      metric.Float64Gauge
	jitterTail     metric.Float64Gauge
	jitterMaxDelta metric.Float64Gauge
	jitterOutliers metric.Int64Counter

	batchDuration   metric.Float64Histogram
	batchThroughput metric.Float64Gauge
	batchEfficiency metric.Float64Gauge

	modelOpt  metric.MeasurementOption // model
	scenOpt   metric.MeasurementOption // model + scenario
	requestOK []metric.RecordOption
	addOpts   []metric.AddOption
	// byState are requestOK plus ortel.measurement.verdict, by the state
	// the interference monitor's latest sample gives (stateNow).
	byState  map[string][]metric.RecordOption
	stateNow func() string
}

func newMetrics(mp metric.MeterProvider, model string, sc Scenario) *metrics {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName, metric.WithInstrumentationVersion(instrument.Version()))
	x := &metrics{
		model:    semconv.OnnxruntimeModelName(model),
		scenario: semconv.OrtelLoadScenario(string(sc)),
		queued:   sc.queued(),
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	x.requestDuration, err = semconv.NewOrtelLoadRequestDuration(m)
	add(err)
	x.queueWait, err = semconv.NewOrtelLoadQueueWait(m)
	add(err)
	x.throughput, err = semconv.NewOrtelLoadThroughput(m)
	add(err)
	x.slaViolations, err = semconv.NewOrtelSLAViolations(m)
	add(err)
	x.slaCompliance, err = semconv.NewOrtelSLACompliance(m)
	add(err)
	x.slaCapacity, err = semconv.NewOrtelSLACapacity(m)
	add(err)
	x.warmupRuns, err = semconv.NewOrtelWarmupRuns(m)
	add(err)
	x.warmupDuration, err = semconv.NewOrtelWarmupDuration(m)
	add(err)
	x.firstRun, err = semconv.NewOrtelWarmupFirstRunDuration(m)
	add(err)
	x.sessionLoad, err = semconv.NewOnnxruntimeSessionLoadDuration(m)
	add(err)
	x.sessionInit, err = semconv.NewOnnxruntimeSessionInitializationDuration(m)
	add(err)
	x.jitterStd, err = semconv.NewOrtelJitterStddev(m)
	add(err)
	x.jitterTail, err = semconv.NewOrtelJitterTailRatio(m)
	add(err)
	x.jitterMaxDelta, err = semconv.NewOrtelJitterMaxDelta(m)
	add(err)
	x.jitterOutliers, err = semconv.NewOrtelJitterOutliers(m)
	add(err)
	x.batchDuration, err = semconv.NewOrtelBatchDuration(m)
	add(err)
	x.batchThroughput, err = semconv.NewOrtelBatchThroughput(m)
	add(err)
	x.batchEfficiency, err = semconv.NewOrtelBatchScalingEfficiency(m)
	add(err)

	x.modelOpt = metric.WithAttributeSet(attribute.NewSet(x.model))
	x.scenOpt = metric.WithAttributeSet(attribute.NewSet(x.model, x.scenario))
	x.requestOK = []metric.RecordOption{x.scenOpt}
	x.byState = map[string][]metric.RecordOption{
		report.MeasurementStable:    {metric.WithAttributeSet(attribute.NewSet(x.model, x.scenario, semconv.OrtelMeasurementVerdictStable))},
		report.MeasurementDisturbed: {metric.WithAttributeSet(attribute.NewSet(x.model, x.scenario, semconv.OrtelMeasurementVerdictDisturbed))},
	}
	x.addOpts = []metric.AddOption{x.scenOpt}
	x.queueDepth, err = semconv.NewOrtelLoadQueueDepth(m)
	add(err)
	if len(errs) > 0 {
		// A broken meter must not stop the bench; the API hands out no-op
		// instruments on error.
		otel.Handle(fmt.Errorf("ortel bench: creating instruments: %w", errors.Join(errs...)))
	}
	return x
}

// errorType is the error.type of a failed request, as instrument records it
// on the run's span: the value of an ErrorType() string method in the chain
// (a *instrument.RunError says how its run failed), canceled or
// deadline_exceeded for context errors, session_closed for a session
// closed under the load, else the error's Go type.
func errorType(err error) string {
	var typed interface{ ErrorType() string }
	switch {
	case errors.As(err, &typed):
		return typed.ErrorType()
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	case errors.Is(err, instrument.ErrClosed):
		return "session_closed"
	}
	return upstreamsemconv.ErrorType(err).Value.AsString()
}

// queue returns a queue-depth counter feeding ortel.load.queue.depth.
func (x *metrics) queue() *queueDepth {
	return &queueDepth{onChange: func(d int64) { x.queueDepth.Add(context.Background(), d, x.addOpts...) }}
}

// request records one finished request of the measured phase.
func (x *metrics) request(r record) {
	ctx := context.Background()
	if r.err != nil {
		x.requestDuration.Record(ctx, r.latency.Seconds(), metric.WithAttributes(x.model, x.scenario,
			semconv.ErrorType(errorType(r.err))))
	} else {
		opts := x.requestOK
		if x.stateNow != nil {
			if o, ok := x.byState[x.stateNow()]; ok {
				opts = o
			}
		}
		x.requestDuration.Record(ctx, r.latency.Seconds(), opts...)
	}
	if x.queued {
		x.queueWait.Record(ctx, r.wait.Seconds(), x.requestOK...)
	}
}

func (x *metrics) slaAttrs(s SLA) metric.MeasurementOption {
	return metric.WithAttributes(x.model, x.scenario,
		semconv.OrtelSLAThreshold(s.Threshold.Seconds()), semconv.OrtelSLAPercentile(s.Percentile))
}

// sla records the SLA check of the measured phase.
func (x *metrics) sla(s SLA, r report.SLAResult) {
	ctx := context.Background()
	o := x.slaAttrs(s)
	x.slaViolations.Add(ctx, int64(r.Violations), o)
	x.slaCompliance.Record(ctx, r.Compliance, o)
}

// capacity records the peak rate the SLA search found.
func (x *metrics) capacity(s SLA, qps float64) {
	x.slaCapacity.Record(context.Background(), qps, metric.WithAttributes(x.model,
		semconv.OrtelSLAThreshold(s.Threshold.Seconds()), semconv.OrtelSLAPercentile(s.Percentile)))
}

// jitter records the jitter of the measured phase.
func (x *metrics) jitter(j *report.Jitter) {
	if j == nil {
		return
	}
	ctx := context.Background()
	x.jitterStd.Record(ctx, j.StdS, x.scenOpt)
	x.jitterTail.Record(ctx, j.TailRatio, x.scenOpt)
	x.jitterMaxDelta.Record(ctx, j.MaxDeltaS, x.scenOpt)
	x.jitterOutliers.Add(ctx, int64(j.OutlierCount), x.scenOpt)
}

// warmup records the cold start and warm-up.
func (x *metrics) warmup(firstRunS float64, w *report.Warmup) {
	ctx := context.Background()
	x.firstRun.Record(ctx, firstRunS, x.modelOpt)
	if w == nil {
		return
	}
	if w.ModelLoadS > 0 {
		x.sessionLoad.Record(ctx, w.ModelLoadS, x.modelOpt)
	}
	if w.InitializationS > 0 {
		x.sessionInit.Record(ctx, w.InitializationS, x.modelOpt)
	}
	if w.Steady {
		x.warmupRuns.Record(ctx, int64(w.SteadyAfterRuns), x.modelOpt)
		x.warmupDuration.Record(ctx, w.SteadyS, x.modelOpt)
	}
}

// batchOpt returns the attributes of one batch sweep step.
func (x *metrics) batchOpt(b int64) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(x.model, semconv.OrtelBatchSize(int(b))))
}
