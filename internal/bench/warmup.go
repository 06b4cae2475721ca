package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/profile"
)

// Steady-state detection defaults: two windows of 10 runs whose medians
// differ by at most 5%.
const (
	DefaultSteadyWindow    = 10
	DefaultSteadyTolerance = 0.05
	// DefaultWarmupMax caps --warmup auto.
	DefaultWarmupMax = 200
)

// steadyMethod documents the test in the report.
const steadyMethod = "rolling-median stability: steady state starts at run j (j >= 1: the first run is always cold) " +
	"when the median of runs [j, j+W) and the median of runs [j+W, j+2W) differ by at most tolerance × the former"

// steadyState applies the rolling-median stability test to xs (latencies in
// run order, xs[0] the first run): the first j >= 1 with
// |median(xs[j+w:j+2w]) - median(xs[j:j+w])| <= tol·median(xs[j:j+w]).
// It returns j, or ok false when no j fits in xs.
func steadyState(xs []float64, w int, tol float64) (j int, ok bool) {
	if w < 1 {
		return 0, false
	}
	for j = 1; j+2*w <= len(xs); j++ {
		if stable(xs[j:j+w], xs[j+w:j+2*w], tol) {
			return j, true
		}
	}
	return 0, false
}

// stable compares the medians of two windows.
func stable(a, b []float64, tol float64) bool {
	ma, mb := median(a), median(b)
	d := mb - ma
	if d < 0 {
		d = -d
	}
	return d <= tol*ma
}

// steadyDetector runs the test online, as latencies arrive: after each
// add it checks the only new candidate, j = len - 2w.
type steadyDetector struct {
	w   int
	tol float64
	xs  []float64
	j   int
	ok  bool
}

func (d *steadyDetector) add(x float64) (steady bool) {
	d.xs = append(d.xs, x)
	if d.ok {
		return true
	}
	if j := len(d.xs) - 2*d.w; j >= 1 && stable(d.xs[j:j+d.w], d.xs[j+d.w:], d.tol) {
		d.j, d.ok = j, true
	}
	return d.ok
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Names of the Session events of ONNX Runtime's profiler that split session
// creation.
const (
	eventModelLoadingURI   = "model_loading_uri"
	eventModelLoadingArray = "model_loading_array"
	eventSessionInit       = "session_initialization"
)

// coldSplit creates one short-lived profiled session for the model, destroys
// it (which writes the profile) and reads how ONNX Runtime split its
// creation: model loading and session initialization. configure sets the
// same options as the measured session (threads).
func coldSplit(modelPath string, inputs, outputs []string, configure func(*ort.SessionOptions) error) (load, initialize time.Duration, err error) {
	dir, err := os.MkdirTemp("", "ortel-cold-")
	if err != nil {
		return 0, 0, fmt.Errorf("create a folder for the cold-start profile: %w", err)
	}
	defer os.RemoveAll(dir)
	o, err := ort.NewSessionOptions()
	if err != nil {
		return 0, 0, fmt.Errorf("create session options: %w", err)
	}
	defer o.Destroy()
	if err := configure(o); err != nil {
		return 0, 0, err
	}
	prefix := filepath.Join(dir, "cold")
	if err := o.EnableProfiling(prefix); err != nil {
		return 0, 0, fmt.Errorf("enable ONNX Runtime's profiler: %w", err)
	}
	s, err := ort.NewDynamicAdvancedSession(modelPath, inputs, outputs, o)
	if err != nil {
		return 0, 0, fmt.Errorf("create a profiled session for model %q: %w", modelPath, err)
	}
	if err := s.Destroy(); err != nil {
		return 0, 0, fmt.Errorf("destroy the profiled session of model %q: %w", modelPath, err)
	}
	files, _ := filepath.Glob(prefix + "*.json")
	if len(files) == 0 {
		return 0, 0, fmt.Errorf("ONNX Runtime wrote no profile under %s", dir)
	}
	_, err = profile.ReadFile(files[0], func(e *profile.Event) error {
		if e.Category != "Session" {
			return nil
		}
		d := time.Duration(e.Dur) * time.Microsecond
		switch e.Name {
		case eventModelLoadingURI, eventModelLoadingArray:
			load = d
		case eventSessionInit:
			initialize = d
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	return load, initialize, nil
}
