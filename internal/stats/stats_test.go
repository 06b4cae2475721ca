package stats

import (
	"math"
	"reflect"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestQuantileSorted(t *testing.T) {
	s := []float64{1, 2, 3, 4}
	tests := []struct {
		q, want float64
	}{
		{0, 1}, {1, 4}, {0.5, 2.5}, {0.25, 1.75}, {0.9, 3.7}, {-1, 1}, {2, 4},
	}
	for _, tt := range tests {
		if got := QuantileSorted(s, tt.q); !near(got, tt.want) {
			t.Errorf("QuantileSorted(%v, %v) = %v, want %v", s, tt.q, got, tt.want)
		}
	}
	if !math.IsNaN(QuantileSorted(nil, 0.5)) {
		t.Error("quantile of nothing should be NaN")
	}
}

func TestSummarize(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3} // unsorted on purpose
	s := Summarize(xs)
	if s.Count != 5 || s.Min != 1 || s.Max != 5 || s.Mean != 3 || s.P50 != 3 || s.Sum != 15 {
		t.Fatalf("Summarize = %+v", s)
	}
	if want := math.Sqrt(2.5); !near(s.Std, want) {
		t.Errorf("Std = %v, want %v (sample standard deviation)", s.Std, want)
	}
	if xs[0] != 5 {
		t.Error("Summarize sorted its input in place")
	}
	if got := Summarize(nil); !reflect.DeepEqual(got, Summary{}) {
		t.Errorf("Summarize(nil) = %+v, want zero", got)
	}
	one := Summarize([]float64{7})
	if one.Std != 0 || one.P999 != 7 {
		t.Errorf("Summarize of one sample = %+v", one)
	}
}

func TestTailPercentiles(t *testing.T) {
	// 1000 samples of 1 and a single 100: p99.9 must see the outlier, p99 not.
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = 1
	}
	xs[500] = 100
	s := Summarize(xs)
	if s.P99 != 1 {
		t.Errorf("P99 = %v, want 1", s.P99)
	}
	if s.P999 <= 1 || s.Max != 100 {
		t.Errorf("P999 = %v, Max = %v: the outlier must show in the far tail", s.P999, s.Max)
	}
}
