package procfs

import (
	"errors"
	"io/fs"
	"testing"

	"github.com/ortel-dev/ortel/receivers"
)

func TestSummarize(t *testing.T) {
	denied := func(id string) error {
		return receivers.Unsupported("rapl zone "+id, "energy_uj is readable only by root", fs.ErrPermission)
	}
	other := receivers.Unsupported("rapl zone 2", "its name file cannot be read", fs.ErrNotExist)
	plain := errors.New("plain")
	tests := []struct {
		name       string
		errs       []error
		wantReason string
		wantCause  []error // errors.Is must hold for each
	}{
		{"one reason", []error{denied("0"), denied("1")}, "energy_uj is readable only by root", []error{fs.ErrPermission}},
		{"reasons differ", []error{denied("0"), other}, "fallback", []error{fs.ErrPermission, fs.ErrNotExist}},
		{"not unsupported", []error{denied("0"), plain}, "fallback", []error{plain}},
		{"none", nil, "fallback", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reason, cause := Summarize(tt.errs, "fallback")
			if reason != tt.wantReason {
				t.Errorf("reason = %q, want %q", reason, tt.wantReason)
			}
			for _, w := range tt.wantCause {
				if !errors.Is(cause, w) {
					t.Errorf("cause %v does not hold %v", cause, w)
				}
			}
			if common := CommonReason(tt.errs); (common != nil) != (tt.wantReason != "fallback") {
				t.Errorf("CommonReason = %v", common)
			}
		})
	}
}
