package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// maxBatchSizes bounds one sweep.
const maxBatchSizes = 32

// ParseBatches reads batch sizes: one size (8) or a sweep of sizes
// (1,2,4,8,16), each a whole number of 1 or more, none twice.
func ParseBatches(s string) ([]int64, error) {
	parts := strings.Split(s, ",")
	out := make([]int64, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 1 {
			return nil, invalid("{Batches} %q: %q is not a whole number of 1 or more (want a size such as 8, or a list such as 1,2,4,8)", s, p)
		}
		if slices.Contains(out, n) {
			return nil, invalid("{Batches} %q: size %d is given twice", s, n)
		}
		out = append(out, n)
	}
	if len(out) > maxBatchSizes {
		return nil, invalid("{Batches} %q: %d sizes; a sweep takes at most %d", s, len(out), maxBatchSizes)
	}
	return out, nil
}

// requireDynamicBatch checks that some input has a dynamic first dimension,
// which a batch sweep changes.
func requireDynamicBatch(path string, info []ort.InputOutputInfo) error {
	var decl []string
	for _, i := range info {
		if len(i.Dimensions) > 0 && i.Dimensions[0] < 0 {
			return nil
		}
		decl = append(decl, fmt.Sprintf("%s %s", i.Name, dimsText(i.Dimensions)))
	}
	return fmt.Errorf("model %q has no input with a dynamic batch (first) dimension (inputs: %s): a batch sweep needs one", path, strings.Join(decl, ", "))
}

func dimsText(d []int64) string {
	parts := make([]string, len(d))
	for i, n := range d {
		if n < 0 {
			parts[i] = "?"
		} else {
			parts[i] = strconv.FormatInt(n, 10)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// shapesForBatch returns shapes with the first dimension of every input
// whose declared first dimension is dynamic set to b.
func shapesForBatch(info []ort.InputOutputInfo, shapes map[string][]int64, b int64) map[string][]int64 {
	out := make(map[string][]int64, len(shapes))
	for name, s := range shapes {
		out[name] = slices.Clone(s)
	}
	for _, i := range info {
		if s, ok := out[i.Name]; ok && len(s) > 0 && len(i.Dimensions) > 0 && i.Dimensions[0] < 0 {
			s[0] = b
		}
	}
	return out
}

// sweepStep turns one batch size's measured phase into a BatchStep (speed-up
// and efficiency are filled by finishSweep).
func sweepStep(b int64, res *phaseResult, sla *SLA) report.BatchStep {
	lat := res.latencies()
	st := report.BatchStep{Batch: b, Latency: stats.Summarize(lat), Errors: res.errors()}
	if w := res.wall.Seconds(); w > 0 {
		st.RunsPerS = float64(len(lat)) / w
		st.ItemsPerS = st.RunsPerS * float64(b)
	}
	if sla != nil {
		r := sla.check(lat, st.Errors)
		st.SLA = &r
	}
	return st
}

// bestRule documents how the sweep picks its best batch size.
const (
	bestRule    = "highest items/s"
	bestRuleSLA = "highest items/s among the sizes meeting the SLA"
)

// finishSweep fills speed-up and efficiency against the smallest batch size
// and picks the best size.
func finishSweep(steps []report.BatchStep, withSLA bool) *report.BatchSweep {
	sw := &report.BatchSweep{Steps: steps, BestRule: bestRule}
	if withSLA {
		sw.BestRule = bestRuleSLA
	}
	if len(steps) == 0 {
		return sw
	}
	ref := steps[0]
	for _, s := range steps[1:] {
		if s.Batch < ref.Batch {
			ref = s
		}
	}
	sw.ReferenceBatch = ref.Batch
	best := -1.0
	for i := range sw.Steps {
		s := &sw.Steps[i]
		if ref.ItemsPerS > 0 {
			s.Speedup = s.ItemsPerS / ref.ItemsPerS
			s.Efficiency = s.Speedup / (float64(s.Batch) / float64(ref.Batch))
		}
		if withSLA && (s.SLA == nil || !s.SLA.Met) {
			continue
		}
		if s.ItemsPerS > best {
			best = s.ItemsPerS
			sw.BestBatch = s.Batch
		}
	}
	return sw
}
