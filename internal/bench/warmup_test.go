package bench

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/test/testenv"
)

// series builds a latency series: f(i) for i in [0, n).
func series(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestSteadyState(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		xs     []float64
		wantOK bool
		wantJ  int
	}{
		{"flat after a cold first run", series(40, func(i int) float64 {
			if i == 0 {
				return 0.5
			}
			return 0.010
		}), true, 1},
		// Runs 1..14 take 30ms, then 10ms. A window holding more slow
		// runs than fast ones has a 30ms median, so the first window pair
		// with equal medians starts at j=11: runs 11..20 hold 4 slow and 6
		// fast (median 10ms), runs 21..30 are fast.
		{"step down at run 15", series(80, func(i int) float64 {
			if i < 15 {
				return 0.030
			}
			return 0.010
		}), true, 11},
		// A long slow plateau is steady too: the test sees levels, not
		// what comes after them.
		{"plateau before a step", series(80, func(i int) float64 {
			if i < 30 {
				return 0.030
			}
			return 0.010
		}), true, 1},
		// x(i) = 10ms·(1 + 4·e^(-i/8)). The window medians are about x(j+4.5)
		// and x(j+14.5); their difference is at most 5% of the first once
		// 26.5·e^(-(j+4.5)/8) <= 0.5, at j = 28.
		{"exponential decay", series(200, func(i int) float64 { return 0.010 * (1 + 4*math.Exp(-float64(i)/8)) }), true, 28},
		{"steady growth never settles", series(200, func(i int) float64 { return 0.010 * math.Pow(1.02, float64(i)) }), false, 0},
		{"noise of ±2% is steady", series(60, func(i int) float64 { return 0.010 * (1 + 0.04*(rng.Float64()-0.5)) }), true, 1},
		{"too short to tell", series(20, func(int) float64 { return 0.01 }), false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, ok := steadyState(tt.xs, 10, 0.05)
			if ok != tt.wantOK || j != tt.wantJ {
				t.Fatalf("steadyState = %d, %t; want %d, %t", j, ok, tt.wantJ, tt.wantOK)
			}
			if ok {
				a, b := median(tt.xs[j:j+10]), median(tt.xs[j+10:j+20])
				if math.Abs(b-a) > 0.05*a {
					t.Errorf("windows at %d: medians %v and %v differ by more than 5%%", j, a, b)
				}
				if j > 1 {
					a, b := median(tt.xs[j-1:j+9]), median(tt.xs[j+9:j+19])
					if math.Abs(b-a) <= 0.05*a {
						t.Errorf("run %d already passed the test; %d is not the first", j-1, j)
					}
				}
			}
			// The online detector agrees.
			d := &steadyDetector{w: 10, tol: 0.05}
			for _, x := range tt.xs {
				d.add(x)
			}
			if d.ok != ok || d.j != j {
				t.Errorf("online detector: %d, %t", d.j, d.ok)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1}, 2}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
}

// TestColdSplit reads ONNX Runtime's own split of session creation from a
// profiled session.
func TestColdSplit(t *testing.T) {
	testenv.RequireORT(t)
	path := filepath.Join(t.TempDir(), "m.onnx")
	if err := onnxgen.DynamicBatch(32, 3).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	threads := 0
	load, init, err := coldSplit(path, []string{"x"}, []string{"y"}, func(o *ort.SessionOptions) error {
		threads++
		return o.SetIntraOpNumThreads(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if load <= 0 || init <= 0 || threads != 1 {
		t.Errorf("load %v, initialization %v, configured %d times", load, init, threads)
	}
	if _, _, err := coldSplit(filepath.Join(t.TempDir(), "nope.onnx"), []string{"x"}, []string{"y"}, func(*ort.SessionOptions) error { return nil }); err == nil {
		t.Error("a missing model gave no error")
	}
}
