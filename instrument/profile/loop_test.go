package profile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/test/testenv"
)

var msName = regexp.MustCompile(`_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_\d{3}\.json$`)

// Environment of TestHelperLoopProfile, set by TestLoopProfileEveryVersion.
const envLoopDir = "ORTEL_TEST_LOOP_PROFILE_DIR"

const (
	loopTrips = 3
	loopRuns  = 2
)

// TestHelperLoopProfile is not a test of its own: run by
// TestLoopProfileEveryVersion in a child process (one ONNX Runtime library
// per process), it profiles loopRuns runs of a synthetic Loop model and
// leaves the profile in $ORTEL_TEST_LOOP_PROFILE_DIR.
func TestHelperLoopProfile(t *testing.T) {
	dir := os.Getenv(envLoopDir)
	if dir == "" {
		t.Skip("run by TestLoopProfileEveryVersion")
	}
	if _, err := ortlib.Init(); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "loop.onnx")
	if err := onnxgen.Loop(loopTrips, 64).WriteFile(model); err != nil {
		t.Fatal(err)
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer opts.Destroy()
	if err := opts.EnableProfiling(filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	s, err := ort.NewDynamicAdvancedSession(model, []string{"x"}, []string{"y"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ort.NewTensor(ort.NewShape(64), make([]float32, 64))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Destroy()
	y, err := ort.NewEmptyTensor[float32](ort.NewShape(64))
	if err != nil {
		t.Fatal(err)
	}
	defer y.Destroy()
	for range loopRuns {
		if err := s.Run([]ort.Value{x}, []ort.Value{y}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
}

// TestLoopProfileEveryVersion profiles a synthetic Loop model with each
// ONNX Runtime library in the cache (1.24.3 and 1.30.0), each in a child
// process, and nests the profile: every body node is a child of the Loop
// node, loopTrips times per run, and the run's self times sum to at most
// its duration. It catches a flat tree for Loop (the subgraph nodes as the
// Loop's siblings) on either version.
func TestLoopProfileEveryVersion(t *testing.T) {
	testenv.RequireORT(t)
	libs, _ := filepath.Glob(filepath.Join(ortlib.CacheDir(), "onnxruntime", "*", "libonnxruntime.so.1"))
	if len(libs) == 0 {
		testenv.Missing(t, "no ONNX Runtime library in the cache %s: run scripts/fetch.sh ort", ortlib.CacheDir())
	}
	for _, lib := range libs {
		version := filepath.Base(filepath.Dir(lib))
		t.Run(version, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLoopProfile$", "-test.count=1")
			cmd.Env = append(os.Environ(), envLoopDir+"="+dir, ortlib.EnvLibraryPath+"="+lib)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("profiling with %s: %v\n%s", lib, err, out)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "loop*.json"))
			if len(files) != 1 {
				t.Fatalf("profile files %v, want one", files)
			}
			var evs []Event
			if _, err := ReadFile(files[0], func(e *Event) error {
				evs = append(evs, e.Clone())
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			runs := 0
			for _, run := range evs {
				if run.Name != "model_run" {
					continue
				}
				runs++
				var in []Event
				for _, e := range evs {
					if (e.IsKernel() || e.IsExecute()) && e.TS >= run.TS && e.TS+e.Dur <= run.TS+run.Dur {
						in = append(in, e)
					}
				}
				pl := Nest(in)
				var self int64
				body := 0
				for i, e := range in {
					if !e.IsKernel() {
						continue
					}
					self += pl[i].Self
					if e.OpName == "Loop" {
						if pl[i].Parent != -1 {
							t.Errorf("the Loop node has parent %d", pl[i].Parent)
						}
						continue
					}
					if p := pl[i].Parent; p < 0 || in[p].OpName != "Loop" {
						t.Errorf("body node %s (%s): parent %d, want the Loop node", e.Name, e.OpName, p)
						continue
					}
					body++
				}
				t.Logf("run %d: %d body node spans under the Loop, self %d µs of %d µs", runs, body, self, run.Dur)
				if body < loopTrips*2 || body%loopTrips != 0 {
					t.Errorf("%d body node spans in a run of %d trips", body, loopTrips)
				}
				if self > run.Dur {
					t.Errorf("self times sum to %d µs, over the run's %d µs", self, run.Dur)
				}
			}
			if runs != loopRuns {
				t.Errorf("%d runs, want %d", runs, loopRuns)
			}
			// ORT 1.25 and later add milliseconds to the file's time stamp.
			var major, minor int
			fmt.Sscanf(version, "%d.%d", &major, &minor)
			wantMS := major > 1 || minor >= 25
			if hasMS := msName.MatchString(filepath.Base(files[0])); hasMS != wantMS {
				t.Errorf("file name %s: milliseconds %v, want %v", filepath.Base(files[0]), hasMS, wantMS)
			}
		})
	}
}
