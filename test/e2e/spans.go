package e2e

import (
	"fmt"
	"time"

	"github.com/ortel-dev/ortel/test/otlptest"
)

// Attribute keys that tell ortel's spans apart (see semconv).
const (
	attrRunProfiled = "onnxruntime.run.profiled" // on run spans only
	attrNodeOpType  = "onnxruntime.node.op_type" // on operator spans only
)

// SpanTree summarizes the run and operator spans of a trace export.
type SpanTree struct {
	Runs         int            // run spans
	ProfiledRuns int            // run spans with onnxruntime.run.profiled=true
	Operators    int            // operator spans
	OpTypes      map[string]int // operator spans per op type
}

// IsRunSpan reports whether s is an ortel run span (it carries
// onnxruntime.run.profiled).
func IsRunSpan(s otlptest.Span) bool {
	_, ok := otlptest.AttrBool(s.GetAttributes(), attrRunProfiled)
	return ok
}

// IsOperatorSpan reports whether s is an ortel operator span (it carries
// onnxruntime.node.op_type).
func IsOperatorSpan(s otlptest.Span) bool {
	_, ok := otlptest.AttrString(s.GetAttributes(), attrNodeOpType)
	return ok
}

// CheckSpanTree checks that every operator span's parent is a profiled run
// span of the same trace, and that the operator lies within the run's
// interval (give or take tolerance). It returns the tree's counts and one
// error per violation (at most maxErrs, then a count of the rest).
func CheckSpanTree(spans []otlptest.Span, tolerance time.Duration, maxErrs int) (SpanTree, []error) {
	tree := SpanTree{OpTypes: map[string]int{}}
	byID := make(map[string]otlptest.Span, len(spans))
	for _, s := range spans {
		byID[s.TraceID()+"/"+s.SpanID()] = s
		if IsRunSpan(s) {
			tree.Runs++
			if p, _ := otlptest.AttrBool(s.GetAttributes(), attrRunProfiled); p {
				tree.ProfiledRuns++
			}
		}
	}
	var errs []error
	more := 0
	fail := func(format string, args ...any) {
		if len(errs) < maxErrs {
			errs = append(errs, fmt.Errorf(format, args...))
		} else {
			more++
		}
	}
	tol := uint64(tolerance.Nanoseconds())
	for _, s := range spans {
		if !IsOperatorSpan(s) {
			continue
		}
		tree.Operators++
		op, _ := otlptest.AttrString(s.GetAttributes(), attrNodeOpType)
		tree.OpTypes[op]++
		what := fmt.Sprintf("operator span %q (%s, trace %s)", s.GetName(), s.SpanID(), s.TraceID())
		if s.ParentSpanID() == "" {
			fail("%s has no parent", what)
			continue
		}
		parent, ok := byID[s.TraceID()+"/"+s.ParentSpanID()]
		switch {
		case !ok:
			if _, elsewhere := otlptest.SpanByID(spans, s.ParentSpanID()); elsewhere {
				fail("%s: its parent %s is in another trace", what, s.ParentSpanID())
			} else {
				fail("%s: its parent %s never arrived", what, s.ParentSpanID())
			}
			continue
		case !IsRunSpan(parent):
			fail("%s: its parent %q is not a run span", what, parent.GetName())
			continue
		}
		if p, _ := otlptest.AttrBool(parent.GetAttributes(), attrRunProfiled); !p {
			fail("%s: its parent run %s was not profiled (onnxruntime.run.profiled=false)", what, parent.SpanID())
		}
		if s.GetStartTimeUnixNano()+tol < parent.GetStartTimeUnixNano() ||
			s.GetEndTimeUnixNano() > parent.GetEndTimeUnixNano()+tol {
			fail("%s [%d, %d] lies outside its run %s [%d, %d] (ns)", what,
				s.GetStartTimeUnixNano(), s.GetEndTimeUnixNano(), parent.SpanID(),
				parent.GetStartTimeUnixNano(), parent.GetEndTimeUnixNano())
		}
		if s.GetEndTimeUnixNano() < s.GetStartTimeUnixNano() {
			fail("%s ends before it starts", what)
		}
	}
	if more > 0 {
		errs = append(errs, fmt.Errorf("... and %d more", more))
	}
	return tree, errs
}

// Services of the two workloads: `ortel bench` and the ocr-pipeline example.
const (
	BenchService    = "ortel"
	PipelineService = "ocr-pipeline"
)

// BenchSpans keeps the spans of the bench workload.
func BenchSpans(spans []otlptest.Span) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range spans {
		if s.ServiceName() == BenchService {
			out = append(out, s)
		}
	}
	return out
}

// CheckPipelineTree checks the pipeline example's traces: every run span
// sits under a stage span (detect, classify or recognize) that sits under
// a request span, all in one trace per request, and there are requests
// requests.
func CheckPipelineTree(all []otlptest.Span, requests int) error {
	var spans []otlptest.Span
	for _, s := range all {
		if s.ServiceName() == PipelineService {
			spans = append(spans, s)
		}
	}
	runs, reqs := 0, map[string]bool{}
	for _, r := range spans {
		if !IsRunSpan(r) {
			continue
		}
		runs++
		stage, ok := otlptest.SpanByID(spans, r.ParentSpanID())
		if !ok {
			return fmt.Errorf("pipeline run span %q has no parent among the pipeline's spans", r.Name)
		}
		if name, _ := otlptest.AttrString(stage.GetAttributes(), "ortel.stage.name"); name == "" {
			return fmt.Errorf("pipeline run span %q has parent %q, which is not a stage span", r.Name, stage.Name)
		}
		req, ok := otlptest.SpanByID(spans, stage.ParentSpanID())
		if !ok || req.Name != "POST /ocr" {
			return fmt.Errorf("stage span %q is not under a request span", stage.Name)
		}
		if req.TraceID() != r.TraceID() {
			return fmt.Errorf("run %q and its request are in different traces", r.Name)
		}
		reqs[req.SpanID()] = true
	}
	if runs == 0 {
		return fmt.Errorf("no run spans from %s arrived", PipelineService)
	}
	if len(reqs) != requests {
		return fmt.Errorf("pipeline runs sit under %d requests, want %d", len(reqs), requests)
	}
	return nil
}
