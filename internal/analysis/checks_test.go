package analysis

import (
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestSetChecks: each finding gets the command that tests it on the
// report's model, by its catalog name or else its path (quoted for the
// shell); a finding whose fix is in the model gets none.
func TestSetChecks(t *testing.T) {
	tests := []struct {
		name, catalog, path, rule string
		evidence                  []report.Evidence
		want                      string
	}{
		{"warm-up by catalog name", "paddleocr-det", "/m/det.onnx", "long-warmup", nil, "ortel bench paddleocr-det --warmup auto"},
		{"batch from its evidence", "", "/m/det.onnx", "better-batch-size", []report.Evidence{{Name: "best_batch", Value: 4}}, "ortel bench /m/det.onnx --batch 4"},
		{"a path to quote", "", "/my models/it's.onnx", "high-jitter", nil, `taskset -c 1 ortel bench '/my models/it'\''s.onnx' --threads 1`},
		{"a fix in the model", "paddleocr-det", "/m/det.onnx", "memory-bound-hot-ops", nil, ""},
		{"doctor", "paddleocr-det", "/m/det.onnx", "thermal-throttling", nil, "ortel doctor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fds := []report.Finding{{Rule: tt.rule, Evidence: tt.evidence}}
			setChecks(fds, &report.Report{Model: report.Model{Catalog: tt.catalog, Path: tt.path}})
			if fds[0].Check != tt.want {
				t.Errorf("check %q, want %q", fds[0].Check, tt.want)
			}
		})
	}
	for _, r := range Rules() {
		if _, ok := checks[r.ID]; !ok && r.ID != "memory-bound-hot-ops" && r.ID != "partial-roofline" && r.ID != "memcpy-transitions" {
			t.Errorf("rule %s has no command that tests it", r.ID)
		}
	}
}
