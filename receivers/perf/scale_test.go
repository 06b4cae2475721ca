package perf

import (
	"math"
	"testing"
)

func TestScaled(t *testing.T) {
	tests := []struct {
		name string
		r    reading
		want uint64
	}{
		{"never ran", reading{value: 0, enabled: 1000, running: 0}, 0},
		{"never enabled", reading{}, 0},
		{"counted all the time", reading{value: 12345, enabled: 1000, running: 1000}, 12345},
		{"on the PMU half the time", reading{value: 500, enabled: 2000, running: 1000}, 1000},
		{"a third of the time, rounded down", reading{value: 100, enabled: 3000, running: 1000}, 300},
		{"running above enabled (clock skew)", reading{value: 77, enabled: 999, running: 1000}, 77},
		{"product above 2^64", reading{value: 1 << 62, enabled: 1 << 40, running: 1 << 39}, 1 << 63},
		{"estimate above 2^64 is capped", reading{value: math.MaxUint64 / 2, enabled: 4, running: 1}, math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.scaled(); got != tt.want {
				t.Errorf("scaled(%+v) = %d, want %d", tt.r, got, tt.want)
			}
		})
	}
}
