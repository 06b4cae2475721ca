package analysis

import (
	"fmt"

	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/report"
)

// checks are, per rule, the command that tests what the finding
// recommends on the report's model (bench is "ortel bench MODEL"): its
// numbers measured again with the change. A rule whose fix is in the
// model itself, with no command of ortel's to try it, has none.
var checks = map[string]func(fd *report.Finding, bench string) string{
	"long-warmup": func(_ *report.Finding, bench string) string { return bench + " --warmup auto" },
	// One intra-op thread on one core of its own: the jitter left is the
	// model's, not other processes'.
	"high-jitter": func(_ *report.Finding, bench string) string { return "taskset -c 1 " + bench + " --threads 1" },
	"better-batch-size": func(fd *report.Finding, bench string) string {
		for _, e := range fd.Evidence {
			if e.Name == "best_batch" {
				return fmt.Sprintf("%s --batch %g", bench, e.Value)
			}
		}
		return ""
	},
	"overhead-bound-ops": func(_ *report.Finding, bench string) string { return bench + " --tune --tune-opt-levels extended,all" },
	"layout-reorder":     func(_ *report.Finding, bench string) string { return bench + " --tune --tune-opt-levels extended,all" },
	"thread-imbalance":   func(_ *report.Finding, bench string) string { return bench + " --tune" },
	"dominant-op-type":   func(_ *report.Finding, bench string) string { return bench + " --tune" },
	"cpu-fallback":       func(*report.Finding, string) string { return "ortel doctor" },
	"partial-offload":    func(*report.Finding, string) string { return "ortel doctor" },
	"thermal-throttling": func(*report.Finding, string) string { return "ortel doctor" },
	"qdq-pairs": func(_ *report.Finding, bench string) string {
		return bench + " --session-config " + qdqCleanupKey + "=1"
	},
	"control-flow": variant,
	// With the model's path and heads: setChecks prefixes the fusion.
	"unfused-attention":      variant,
	"compute-far-below-peak": func(_ *report.Finding, bench string) string { return bench + " --tune --tune-opt-levels extended,all" },
	"dequantize-weights":     variant,
	"gpu-underused":          func(_ *report.Finding, bench string) string { return bench + " --batch 1,2,4,8" },
}

// variant is the check of a fix made in the model itself: the model
// and NEW.onnx, the model with the change, measured and compared.
func variant(_ *report.Finding, bench string) string {
	return bench + " --out out/before && ortel bench NEW.onnx --out out/after && ortel compare out/before/report.json out/after/report.json"
}

// setChecks sets each finding's Check: the command that tests it on the
// report's model (its catalog name, else its path).
func setChecks(fds []report.Finding, rep *report.Report) {
	model := rep.Model.Catalog
	if model == "" {
		model = bench.ShellQuote(rep.Model.Path)
	}
	for i := range fds {
		if fds[i].Rule == "unfused-attention" {
			fds[i].Check = attentionCheck(&fds[i], rep, "ortel bench "+model)
		} else if f, ok := checks[fds[i].Rule]; ok {
			fds[i].Check = f(&fds[i], "ortel bench "+model)
		}
	}
}

// attentionCheck fuses the model's attention with ONNX Runtime's
// transformer optimizer into NEW.onnx, with the heads the finding read
// from the profile, then benches and compares it.
func attentionCheck(fd *report.Finding, rep *report.Report, benchCmd string) string {
	var names []string
	for _, in := range rep.Model.Inputs {
		names = append(names, in.Name)
	}
	cmd := fmt.Sprintf("python -m onnxruntime.transformers.optimizer --input %s --output NEW.onnx --model_type %s", bench.ShellQuote(rep.Model.Path), transformerModelType(names))
	var heads, size float64
	for _, e := range fd.Evidence {
		switch e.Name {
		case "heads":
			heads = e.Value
		case "head_size":
			size = e.Value
		}
	}
	if heads > 0 && size > 0 {
		cmd += fmt.Sprintf(" --num_heads %g --hidden_size %g", heads, heads*size)
	}
	return cmd + " && " + variant(fd, benchCmd)
}
