package analysis

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/semconv"
)

// analyzedReport is a report with a roofline, two findings and energy.
func analyzedReport(energy bool) *report.Report {
	f := timeline(repeat(5, convNode(1e-3), node("Add", cpuEP, 1e-3), node("Clip", cpuEP, 1e-3), node("Mul", cpuEP, 1e-3), node("Div", cpuEP, 1e-3))...)
	f.Latency = latency(0.010, 0.018, 0.011, 0.002, 100)
	rep := &report.Report{Model: report.Model{Name: "det"}, Latency: report.Latency{Summary: f.Latency}}
	a := &report.Analysis{Peaks: fixedPeaks, Roofline: f.Roofline, Findings: Findings(f)}
	if energy {
		idle := 10.0
		fl := f.Roofline.FLOPs
		a.Energy = Energy([]EnergyReading{{Name: "package-0", Type: "cpu", ID: "rapl:0", Joules: 50, DurationS: 2, IdleW: &idle, MaxW: 30, InTotal: true}}, "", 100, &fl, 480, DefaultGridSource)
	} else {
		a.Energy = Energy(nil, "no energy source", 100, nil, 480, DefaultGridSource)
	}
	rep.Analysis = a
	return rep
}

func TestExportSpanLinksProfiledRuns(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	tr := tp.Tracer("test")
	ctx := context.Background()
	// Three profiled runs, as the bench records them in the report.
	rep := analyzedReport(false)
	rep.Operators = &report.Operators{}
	for range 3 {
		_, run := tr.Start(ctx, "run det")
		run.End()
		sc := run.SpanContext()
		rep.Operators.RunSpans = append(rep.Operators.RunSpans, report.SpanRef{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()})
	}
	rep.Operators.RunSpans = append(rep.Operators.RunSpans, report.SpanRef{TraceID: "not hex", SpanID: "x"}) // skipped
	rootCtx, root := tr.Start(ctx, "bench det")
	if err := Export(rootCtx, rep, Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()}); err != nil {
		t.Fatal(err)
	}
	root.End()
	var span sdktrace.ReadOnlySpan
	for _, s := range sr.Ended() {
		if s.Name() == "analyze det" {
			span = s
		}
	}
	if span == nil {
		t.Fatal("no analysis span")
	}
	if span.Parent().SpanID() != root.SpanContext().SpanID() || span.SpanContext().TraceID() != root.SpanContext().TraceID() {
		t.Errorf("analysis span's parent %v, want the bench's root %v", span.Parent().SpanID(), root.SpanContext().SpanID())
	}
	if len(span.Links()) != 3 {
		t.Errorf("links = %d, want 3", len(span.Links()))
	}
	for _, l := range span.Links() {
		if l.SpanContext.SpanID() == span.Parent().SpanID() {
			t.Errorf("the analysis span is both a child of and linked to %v", l.SpanContext.SpanID())
		}
	}
	events := span.Events()
	if len(events) != len(rep.Analysis.Findings) || len(events) == 0 {
		t.Fatalf("events = %d, findings = %d", len(events), len(rep.Analysis.Findings))
	}
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range events[0].Attributes {
		got[kv.Key] = kv.Value
	}
	top := rep.Analysis.Findings[0]
	if events[0].Name != "ortel.finding" || got[semconv.OrtelFindingRuleKey].AsString() != top.Rule ||
		got[semconv.OrtelFindingSeverityKey].AsString() != top.Severity || len(got[semconv.OrtelFindingEvidenceKey].AsStringSlice()) != len(top.Evidence) {
		t.Errorf("first event: %s %v", events[0].Name, got)
	}
	spanAttrs := attribute.NewSet(span.Attributes()...)
	if v, _ := spanAttrs.Value(semconv.OrtelFindingRuleKey); v.AsString() != top.Rule {
		t.Errorf("span's top finding = %q, want %q", v.AsString(), top.Rule)
	}
}

func TestExportWithoutRunsIsRoot(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	if err := Export(context.Background(), analyzedReport(false), Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()}); err != nil {
		t.Fatal(err)
	}
	if s := sr.Ended(); len(s) != 1 || s[0].Parent().IsValid() || len(s[0].Links()) != 0 {
		t.Errorf("spans = %v", s)
	}
	// With run spans but no bench root: a root span that links to them.
	rep := analyzedReport(false)
	_, run := tp.Tracer("test").Start(context.Background(), "run det")
	run.End()
	sc := run.SpanContext()
	rep.Operators = &report.Operators{RunSpans: []report.SpanRef{{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()}}}
	if err := Export(context.Background(), rep, Config{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()}); err != nil {
		t.Fatal(err)
	}
	if s := sr.Ended(); len(s) != 3 || s[2].Parent().IsValid() || len(s[2].Links()) != 1 {
		t.Errorf("analysis span with runs and no root: parent %v, %d links; want a root span with 1 link", s[len(s)-1].Parent(), len(s[len(s)-1].Links()))
	}
	if err := Export(context.Background(), &report.Report{}, Config{}); err == nil {
		t.Error("exporting a report without analysis succeeded")
	}
}

func TestExportMetrics(t *testing.T) {
	tests := []struct {
		name    string
		energy  bool
		want    []string
		wantNot []string
	}{
		{"with energy", true,
			[]string{"ortel.roofline.peak.compute", "ortel.roofline.peak.bandwidth", "ortel.operator.compute.rate", "ortel.operator.memory.rate",
				"ortel.operator.intensity", "ortel.operator.roof.utilization", "ortel.finding.impact", "ortel.inference.energy",
				"ortel.inference.energy.dynamic", "ortel.inference.efficiency", "ortel.inference.compute_efficiency", "ortel.inference.power",
				"ortel.inference.carbon", "ortel.grid.carbon_intensity"}, nil},
		{"without energy", false,
			[]string{"ortel.roofline.peak.compute", "ortel.operator.roof.utilization", "ortel.finding.impact"},
			[]string{"ortel.inference.energy", "ortel.inference.energy.dynamic", "ortel.inference.efficiency", "ortel.inference.power", "ortel.inference.carbon", "ortel.grid.carbon_intensity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			rep := analyzedReport(tt.energy)
			if err := Export(context.Background(), rep, Config{MeterProvider: mp, TracerProvider: sdktrace.NewTracerProvider()}); err != nil {
				t.Fatal(err)
			}
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			got := map[string]metricdata.Metrics{}
			for _, sm := range rm.ScopeMetrics {
				if sm.Scope.Name != ScopeName {
					t.Errorf("scope %q", sm.Scope.Name)
				}
				for _, m := range sm.Metrics {
					got[m.Name] = m
				}
			}
			for _, w := range tt.want {
				if _, ok := got[w]; !ok {
					t.Errorf("metric %s not recorded", w)
				}
			}
			for _, w := range tt.wantNot {
				if _, ok := got[w]; ok {
					t.Errorf("metric %s recorded although energy was not measured", w)
				}
			}
			peak := got["ortel.roofline.peak.compute"].Data.(metricdata.Gauge[float64]).DataPoints
			if len(peak) != 1 || peak[0].Value != fixedPeaks.FLOPsPerS {
				t.Errorf("peak compute points %+v", peak)
			}
			if got["ortel.roofline.peak.compute"].Unit != "{flop}/s" {
				t.Errorf("unit %q", got["ortel.roofline.peak.compute"].Unit)
			}
			impacts := got["ortel.finding.impact"].Data.(metricdata.Gauge[float64]).DataPoints
			if len(impacts) != len(rep.Analysis.Findings) {
				t.Errorf("%d impact points for %d findings", len(impacts), len(rep.Analysis.Findings))
			}
			roof := got["ortel.operator.roof.utilization"].Data.(metricdata.Gauge[float64]).DataPoints
			for _, dp := range roof {
				if _, ok := dp.Attributes.Value(semconv.OnnxruntimeNodeOpTypeKey); !ok {
					t.Errorf("roof point without op type: %v", dp.Attributes)
				}
				if _, ok := dp.Attributes.Value(semconv.OnnxruntimeNodeNameKey); ok {
					t.Error("node name on a metric")
				}
			}
		})
	}
}

// TestExportBandwidthRoofsPerLevel: the bandwidth peak gauge has one point
// per memory level and thread count the microbenchmark measured, the
// roofs operators are compared with; a machine with one roof gives one
// point, level "memory".
func TestExportBandwidthRoofsPerLevel(t *testing.T) {
	points := func(p *report.Peaks) map[string]float64 {
		t.Helper()
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		rep := analyzedReport(false)
		rep.Analysis.Peaks = p
		if err := Export(context.Background(), rep, Config{MeterProvider: mp, TracerProvider: sdktrace.NewTracerProvider()}); err != nil {
			t.Fatal(err)
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if m.Name != semconv.OrtelRooflinePeakBandwidthName {
					continue
				}
				for _, dp := range m.Data.(metricdata.Gauge[float64]).DataPoints {
					level, _ := dp.Attributes.Value(semconv.OrtelRooflineLevelKey)
					key := level.AsString()
					if th, ok := dp.Attributes.Value(semconv.OrtelRooflineThreadsKey); ok {
						key += fmt.Sprintf("/%d", th.AsInt64())
					}
					out[key] = dp.Value
				}
			}
		}
		return out
	}
	got := points(levelPeaks())
	want := map[string]float64{"L1/1": 100e9, "L1/0": 120e9, "L2/1": 60e9, "L2/0": 80e9, "L3/1": 40e9, "L3/0": 60e9, "DRAM/1": 20e9, "DRAM/0": 30e9}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("per-level roofs exported %v, want %v", got, want)
	}
	if got := points(fixedPeaks); !reflect.DeepEqual(got, map[string]float64{"memory": fixedPeaks.BytesPerS}) {
		t.Errorf("single roof exported %v, want one point, level memory", got)
	}
}
