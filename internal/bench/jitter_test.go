package bench

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
)

// recs builds closed-loop records from latencies in milliseconds; a
// negative value is a failed request.
func recs(msLat ...float64) []record {
	out := make([]record, len(msLat))
	var at time.Duration
	for i, m := range msLat {
		out[i] = record{seq: i, offset: at}
		if m < 0 {
			out[i].err = errors.New("failed")
			continue
		}
		out[i].latency = time.Duration(m * float64(time.Millisecond))
		at += out[i].latency
	}
	return out
}

func TestJitter(t *testing.T) {
	// 10ms runs, with a 50ms run at index 3 and a 30ms one at index 7.
	lat := []float64{10, 10, 10, 50, 10, 10, 10, 30, 10, 10}
	j := jitter(recs(lat...))
	if j == nil {
		t.Fatal("no jitter")
	}
	if j.MADS != 0 {
		t.Errorf("MAD %v, want 0", j.MADS)
	}
	// Threshold: 10ms + 5 × max(0, 1% of 10ms) = 10.5ms.
	if math.Abs(j.ThresholdS-0.0105) > 1e-12 {
		t.Errorf("threshold %v, want 10.5ms", j.ThresholdS)
	}
	want := []report.Outlier{{Run: 3, OffsetS: 0.030, LatencyS: 0.050}, {Run: 7, OffsetS: 0.110, LatencyS: 0.030}}
	if j.OutlierCount != 2 || len(j.Outliers) != 2 {
		t.Fatalf("outliers %+v", j.Outliers)
	}
	for i, o := range j.Outliers {
		if o.Run != want[i].Run || math.Abs(o.OffsetS-want[i].OffsetS) > 1e-9 || math.Abs(o.LatencyS-want[i].LatencyS) > 1e-9 {
			t.Errorf("outlier %d = %+v, want %+v", i, o, want[i])
		}
	}
	if math.Abs(j.MaxDeltaS-0.040) > 1e-9 {
		t.Errorf("max consecutive delta %v, want 40ms", j.MaxDeltaS)
	}
	if want := (40 + 40 + 20 + 20) / 9.0 / 1000; math.Abs(j.MeanDeltaS-want) > 1e-9 {
		t.Errorf("mean delta %v, want %v", j.MeanDeltaS, want)
	}
	// p50 10ms; p99 interpolates between 30 and 50ms at 0.91: 48.2ms.
	if math.Abs(j.TailRatio-4.82) > 1e-9 {
		t.Errorf("p99/p50 %v, want 4.82", j.TailRatio)
	}
	mean := 16.0
	var ss float64
	for _, x := range lat {
		ss += (x - mean) * (x - mean)
	}
	if want := math.Sqrt(ss/9) / 1000; math.Abs(j.StdS-want) > 1e-12 {
		t.Errorf("std %v, want %v", j.StdS, want)
	}
}

func TestJitterRobustToNoise(t *testing.T) {
	// ±3% noise around 10ms: nothing is an outlier; a 14ms run is.
	lat := make([]float64, 200)
	for i := range lat {
		lat[i] = 10 + 0.3*math.Sin(float64(i))
	}
	if j := jitter(recs(lat...)); j.OutlierCount != 0 {
		t.Errorf("%d outliers in ±3%% noise (threshold %v)", j.OutlierCount, j.ThresholdS)
	}
	lat[100] = 14
	if j := jitter(recs(lat...)); j.OutlierCount != 1 || j.Outliers[0].Run != 100 {
		t.Errorf("outliers %+v, want run 100", j.Outliers)
	}
}

func TestJitterCapsTheList(t *testing.T) {
	lat := make([]float64, 1000)
	for i := range lat {
		lat[i] = 10
		if i%10 == 0 {
			lat[i] = 20 + float64(i)/100 // 100 outliers, slower over time
		}
	}
	j := jitter(recs(lat...))
	if j.OutlierCount != 100 || len(j.Outliers) != report.MaxOutliers {
		t.Fatalf("%d outliers counted, %d listed", j.OutlierCount, len(j.Outliers))
	}
	// The slowest 50 are the last 50, listed in run order.
	for i, o := range j.Outliers {
		if o.Run != 500+10*i {
			t.Fatalf("listed outlier %d is run %d, want %d", i, o.Run, 500+10*i)
		}
	}
}

func TestJitterSkipsFailures(t *testing.T) {
	j := jitter(recs(10, -1, 10, 10, 50))
	if j.OutlierCount != 1 || j.Outliers[0].Run != 4 {
		t.Errorf("outliers %+v, want run 4 (numbered in the phase, failures included)", j.Outliers)
	}
	if jitter(recs(10)) != nil || jitter(recs(-1, -1)) != nil {
		t.Error("jitter of fewer than two latencies")
	}
}
