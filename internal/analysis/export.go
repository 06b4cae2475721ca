package analysis

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/semconv"
)

// ScopeName is the instrumentation scope of the analysis span and metrics.
const ScopeName = "github.com/ortel-dev/ortel/internal/analysis"

// Version is this package's version, reported with ScopeName.
const Version = "0.1.0"

// maxLinks bounds the links of the analysis span to profiled runs.
const maxLinks = 128

// Export emits rep.Analysis as telemetry:
//
//   - one span "analyze <model>" carrying every finding as an event
//     "ortel.finding" (rule, severity, impact, title, recommendation,
//     evidence). It links to the profiled runs (the report's run spans, up
//     to 128, the latest) and is a child of the span in ctx, the bench's
//     root when there is one, else a root span: never a child of a run it
//     also links to, which trace viewers show as a follows-from parent
//     (and Jaeger warns of clock skew). Its own attributes name the top
//     finding.
//   - the gauges of the registry: machine peaks, per-op-type achieved
//     FLOP/s, bytes/s, intensity and roof utilization, finding impacts,
//     and, when energy was measured, joules per inference (total and
//     dynamic), runs per joule, FLOP per joule, power and carbon. Nothing is
//     recorded for what was not measured.
//
// Call it before the providers shut down, so the span and the metrics are
// exported with the rest of the run.
func Export(ctx context.Context, rep *report.Report, c Config) error {
	a := rep.Analysis
	if a == nil {
		return errors.New("export analysis: the report has no analysis section")
	}
	cfg := newConfig(c)
	exportSpan(ctx, cfg, rep.Model.Name, a, runSpans(rep.Operators), rep.Measurement)
	return exportMetrics(ctx, cfg, rep.Model.Name, a)
}

func exportSpan(ctx context.Context, cfg *config, model string, a *report.Analysis, runs []trace.SpanContext, m *report.Measurement) {
	tracer := cfg.TracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version))
	attrs := []attribute.KeyValue{semconv.OnnxruntimeModelName(model)}
	if m != nil {
		attrs = append(attrs, semconv.OrtelMeasurementVerdict(m.State))
	}
	sopts := []trace.SpanStartOption{trace.WithAttributes(attrs...)}
	if n := len(runs); n > 0 {
		var links []trace.Link
		for _, sc := range runs[max(0, n-maxLinks):] {
			links = append(links, trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.Bool(string(semconv.OnnxruntimeRunProfiledKey), true)}})
		}
		sopts = append(sopts, trace.WithLinks(links...))
	}
	_, span := tracer.Start(ctx, "analyze "+model, sopts...)
	defer span.End()
	if len(a.Findings) > 0 {
		top := a.Findings[0]
		span.SetAttributes(semconv.OrtelFindingRule(top.Rule), semconv.OrtelFindingSeverity(top.Severity), semconv.OrtelFindingTitle(top.Title))
	}
	for _, f := range a.Findings {
		span.AddEvent("ortel.finding", trace.WithAttributes(
			semconv.OrtelFindingRule(f.Rule),
			semconv.OrtelFindingSeverity(f.Severity),
			semconv.OrtelFindingImpact(f.Impact),
			semconv.OrtelFindingTitle(f.Title),
			semconv.OrtelFindingRecommendation(f.Recommendation),
			semconv.OrtelFindingEvidence(EvidenceStrings(f.Evidence)),
		))
	}
}

// EvidenceStrings renders evidence for people, as the report does
// (report.EvidenceString): "nodes=93 nodes", "op_type_share=26.5%".
func EvidenceStrings(ev []report.Evidence) []string {
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = report.EvidenceString(e)
	}
	return out
}

type gauges struct {
	peakCompute, peakBandwidth                   metric.Float64Gauge
	opCompute, opMemory, opIntensity, opRoof     metric.Float64Gauge
	impact                                       metric.Float64Gauge
	energy, energyDynamic, efficiency, computeEf metric.Float64Gauge
	power, carbon, grid                          metric.Float64Gauge
}

func newGauges(m metric.Meter) (*gauges, error) {
	g := &gauges{}
	var errs []error
	add := func(f metric.Float64Gauge, err error) metric.Float64Gauge {
		errs = append(errs, err)
		return f
	}
	g.peakCompute = add(semconv.NewOrtelRooflinePeakCompute(m))
	g.peakBandwidth = add(semconv.NewOrtelRooflinePeakBandwidth(m))
	g.opCompute = add(semconv.NewOrtelOperatorComputeRate(m))
	g.opMemory = add(semconv.NewOrtelOperatorMemoryRate(m))
	g.opIntensity = add(semconv.NewOrtelOperatorIntensity(m))
	g.opRoof = add(semconv.NewOrtelOperatorRoofUtilization(m))
	g.impact = add(semconv.NewOrtelFindingImpact(m))
	g.energy = add(semconv.NewOrtelInferenceEnergy(m))
	g.energyDynamic = add(semconv.NewOrtelInferenceEnergyDynamic(m))
	g.efficiency = add(semconv.NewOrtelInferenceEfficiency(m))
	g.computeEf = add(semconv.NewOrtelInferenceComputeEfficiency(m))
	g.power = add(semconv.NewOrtelInferencePower(m))
	g.carbon = add(semconv.NewOrtelInferenceCarbon(m))
	g.grid = add(semconv.NewOrtelGridCarbonIntensity(m))
	return g, errors.Join(errs...)
}

func exportMetrics(ctx context.Context, cfg *config, model string, a *report.Analysis) error {
	g, err := newGauges(cfg.MeterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version)))
	if err != nil {
		return fmt.Errorf("export analysis metrics: %w", err)
	}
	m := semconv.OnnxruntimeModelName(model)
	if p := a.Peaks; p != nil {
		g.peakCompute.Record(ctx, p.FLOPsPerS)
		if len(p.Levels) == 0 {
			g.peakBandwidth.Record(ctx, p.BytesPerS, metric.WithAttributes(semconv.OrtelRooflineLevel(LevelMemory)))
		}
		for _, l := range p.Levels {
			g.peakBandwidth.Record(ctx, l.BytesPerS, metric.WithAttributes(semconv.OrtelRooflineLevel(l.Level), semconv.OrtelRooflineThreads(l.Threads)))
		}
	}
	if r := a.Roofline; r != nil {
		for _, t := range r.ByOpType {
			attrs := metric.WithAttributes(m, semconv.OnnxruntimeNodeOpType(t.OpType), semconv.OnnxruntimeExecutionProvider(t.Provider), semconv.OrtelRooflineBound(t.Bound))
			g.opMemory.Record(ctx, t.BytesPerS, attrs)
			if t.FLOPsPerS != nil {
				g.opCompute.Record(ctx, *t.FLOPsPerS, attrs)
			}
			if t.Intensity != nil {
				g.opIntensity.Record(ctx, *t.Intensity, attrs)
			}
			if t.RoofShare != nil {
				g.opRoof.Record(ctx, *t.RoofShare, attrs)
			}
		}
	}
	for _, f := range a.Findings {
		g.impact.Record(ctx, f.Impact, metric.WithAttributes(m, semconv.OrtelFindingRule(f.Rule), semconv.OrtelFindingSeverity(f.Severity)))
	}
	e := a.Energy
	if !e.Available {
		return nil
	}
	for _, s := range e.Sources {
		attrs := []attribute.KeyValue{m, semconv.HwID(s.ID), semconv.HwType(s.Type)}
		if s.Name != "" {
			attrs = append(attrs, semconv.HwName(s.Name))
		}
		g.energy.Record(ctx, s.JoulesPerInference, metric.WithAttributes(attrs...))
		if s.DynamicJoulesPerInference != nil {
			g.energyDynamic.Record(ctx, *s.DynamicJoulesPerInference, metric.WithAttributes(attrs...))
		}
		g.power.Record(ctx, s.AvgW, metric.WithAttributes(append(attrs, semconv.OrtelPowerAggregationAvg)...))
		if s.MaxW > 0 {
			g.power.Record(ctx, s.MaxW, metric.WithAttributes(append(attrs, semconv.OrtelPowerAggregationMax)...))
		}
		if s.IdleW != nil {
			g.power.Record(ctx, *s.IdleW, metric.WithAttributes(append(attrs, semconv.OrtelPowerAggregationIdle)...))
		}
	}
	g.efficiency.Record(ctx, e.InferencesPerJoule, metric.WithAttributes(m))
	if e.GFLOPsPerWatt != nil {
		g.computeEf.Record(ctx, *e.GFLOPsPerWatt*1e9, metric.WithAttributes(m))
	}
	if e.Carbon.GramsPerInference != nil {
		g.carbon.Record(ctx, *e.Carbon.GramsPerInference, metric.WithAttributes(m))
		g.grid.Record(ctx, e.Carbon.GridIntensity)
	}
	return nil
}

// runSpans turns the report's references to the profiled runs' spans
// into span contexts; references that do not parse are skipped.
func runSpans(ops *report.Operators) []trace.SpanContext {
	if ops == nil {
		return nil
	}
	out := make([]trace.SpanContext, 0, len(ops.RunSpans))
	for _, r := range ops.RunSpans {
		tid, err1 := trace.TraceIDFromHex(r.TraceID)
		sid, err2 := trace.SpanIDFromHex(r.SpanID)
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	}
	return out
}
