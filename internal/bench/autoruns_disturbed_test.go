package bench

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestAutoRunsExtendWhileDisturbed: with the interval narrow enough after
// 10 s, a phase disturbed most of the time goes on, for at most 10 s more;
// a stable one, or one disturbed a little, stops at once.
func TestAutoRunsExtendWhileDisturbed(t *testing.T) {
	a := &AutoRuns{Percentile: 50, Width: 0.5}
	a.defaults()
	narrow := make([]float64, 200)
	for i := range narrow {
		narrow[i] = 0.010
	}
	tests := []struct {
		name     string
		m        *report.Measurement
		wantStop time.Duration // when the rule first says stop, after the width was reached
	}{
		{"not watched", nil, 0},
		{"stable", &report.Measurement{State: report.MeasurementStable}, 0},
		{"disturbed 20%", &report.Measurement{State: report.MeasurementDisturbed, AffectedShare: 0.2}, 0},
		{"disturbed 80%", &report.Measurement{State: report.MeasurementDisturbed, AffectedShare: 0.8}, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ext atomic.Bool
				rule := autoRule(a, func(time.Time) *report.Measurement { return tt.m }, &ext)
				if rule(narrow[:5]) {
					t.Fatal("stopped before the interval was narrow")
				}
				time.Sleep(10 * time.Second)
				reached := time.Now()
				for !rule(narrow) {
					time.Sleep(time.Second)
				}
				if got := time.Since(reached); got != tt.wantStop {
					t.Errorf("stopped %s after the width was reached, want %s", got, tt.wantStop)
				}
				if ext.Load() != (tt.wantStop > 0) {
					t.Errorf("extended %v", ext.Load())
				}
			})
		})
	}
}
