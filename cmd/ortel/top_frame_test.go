package main

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ortel-dev/ortel/internal/liveview"
)

// TestTopFrameFits: every frame fits the terminal, however small, and
// always ends with how to quit.
func TestTopFrameFits(t *testing.T) {
	v, frac := 0.004, 0.5
	s := liveview.Snapshot{Version: 1,
		Runs:     liveview.Runs{Total: 10, P50Seconds: &v, P95Seconds: &v, P99Seconds: &v, MeanSeconds: &v},
		Phase:    &liveview.Phase{Name: "measured", Detail: strings.Repeat("long detail ", 20), Progress: &frac},
		Hardware: liveview.Hardware{CPUUtilization: &frac, MemoryUsedBytes: &v, ProcessMemoryBytes: &v},
	}
	for i := range 30 {
		s.Operators = append(s.Operators, liveview.Operator{OpType: "Conv", Count: uint64(i), TotalSeconds: v})
	}
	for _, size := range [][2]int{{80, 24}, {40, 10}, {20, 3}, {200, 60}, {1, 1}} {
		w, h := size[0], size[1]
		lines := topFrame(s, []float64{1, 2, 3}, "http://127.0.0.1:9770/", w, h, errors.New("cannot reach"))
		if len(lines) > h {
			t.Errorf("%dx%d: %d lines", w, h, len(lines))
		}
		for _, l := range lines {
			if utf8.RuneCountInString(l) > w {
				t.Errorf("%dx%d: line of %d columns: %q", w, h, utf8.RuneCountInString(l), l)
			}
		}
		if last := lines[len(lines)-1]; !strings.HasPrefix("q quits", last) {
			t.Errorf("%dx%d: last line %q, want the quit hint", w, h, last)
		}
	}
}
