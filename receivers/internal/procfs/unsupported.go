package procfs

import (
	"errors"

	"github.com/ortel-dev/ortel/receivers"
)

// CommonReason returns the first of errs when every one is an
// *receivers.UnsupportedError giving the same reason (energy_uj readable
// only by root, say), so that a source none of whose parts — RAPL zones,
// sensors, perf events — can be read says it once; else nil.
func CommonReason(errs []error) *receivers.UnsupportedError {
	var first *receivers.UnsupportedError
	for _, err := range errs {
		var ue *receivers.UnsupportedError
		if !errors.As(err, &ue) || (first != nil && ue.Reason != first.Reason) {
			return nil
		}
		if first == nil {
			first = ue
		}
	}
	return first
}

// Summarize returns the reason and cause of CommonReason(errs) when there
// is one, else fallback and every error joined.
func Summarize(errs []error, fallback string) (reason string, cause error) {
	if ue := CommonReason(errs); ue != nil {
		return ue.Reason, ue.Err
	}
	return fallback, errors.Join(errs...)
}
