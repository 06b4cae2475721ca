// Package ortprofile writes real ONNX Runtime profiles for tests: the
// session-level file SessionOptions.EnableProfiling writes in every
// language, and the files of instrument's profiled runs (run-level on ONNX
// Runtime 1.25 and later), with a chosen ORT release of the project's
// cache, in a child process (a process loads one ONNX Runtime).
//
// A test package that calls [Write] declares the child test:
//
//	func TestWriteProfilesChild(t *testing.T) { ortprofile.Child(t) }
package ortprofile

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

// ProfiledRuns is how many runs each real profile holds: enough for
// ortel compare (analysis.MinSamples).
const ProfiledRuns = 6

// Environment of the child process that writes real profiles (a process
// loads one ONNX Runtime, so each version gets a child).
const (
	envGenDir   = "ORTEL_TEST_PROFILE_GEN_DIR"
	envGenModel = "ORTEL_TEST_PROFILE_GEN_MODEL"
)

// Write has ONNX Runtime at version write profiles of model (a file
// of the project's cache, such as ch_PP-OCRv4_det_infer.onnx) with every
// input's dynamic size 1 (images 64x64), in a child process, and returns
// the folder: session/ holds the session-level profile that
// SessionOptions.EnableProfiling writes (what Python, C# and C++ users get)
// and run/ the files of instrument's profiled runs, ProfiledRuns runs each: run-level
// profiles (RunOptions) on 1.25 and later, a profiled copy's session
// profile before.
func Write(t *testing.T, version, model string) string {
	t.Helper()
	lib := filepath.Join(ortlib.CacheDir(), "onnxruntime", version, "libonnxruntime.so.1")
	if _, err := os.Stat(lib); err != nil {
		testenv.Missing(t, "needs ONNX Runtime %s (%v); fetch it with: %s", version, err, ortlib.FetchHint)
	}
	path := testenv.Model(t, model)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestWriteProfilesChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), envGenDir+"="+dir, envGenModel+"="+path,
		ortlib.EnvVersion+"="+version, ortlib.EnvLibraryPath+"="+lib)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestWriteProfilesChild") {
		t.Fatalf("writing profiles with ONNX Runtime %s: %v\n%s", version, err, out)
	}
	return dir
}

// Child is the body of the child test TestWriteProfilesChild: it skips
// unless Write started it.
func Child(t *testing.T) {
	dir, model := os.Getenv(envGenDir), os.Getenv(envGenModel)
	if dir == "" {
		t.Skip("run by ortprofile.Write only")
	}
	if _, err := ortlib.Init(); err != nil {
		t.Fatal(err)
	}
	ins, outs, err := ort.GetInputOutputInfo(model)
	if err != nil {
		t.Fatal(err)
	}
	var inNames, outNames []string
	for _, o := range outs {
		outNames = append(outNames, o.Name)
	}
	inputs := make([]ort.Value, len(ins))
	for i, in := range ins {
		inNames = append(inNames, in.Name)
		dims := append([]int64(nil), in.Dimensions...)
		for j := range dims {
			if dims[j] <= 0 {
				dims[j] = 1
				if len(dims) == 4 && j >= 2 {
					dims[j] = 64
				}
			}
		}
		v, err := newInput(in.DataType, dims)
		if err != nil {
			t.Fatalf("input %s: %v", in.Name, err)
		}
		inputs[i] = v
	}
	run := func(name string, do func([]ort.Value) error) {
		for i := 0; i < ProfiledRuns; i++ {
			outputs := make([]ort.Value, len(outNames))
			if err := do(outputs); err != nil {
				t.Fatalf("%s run %d: %v", name, i, err)
			}
			for _, o := range outputs {
				if o != nil {
					o.Destroy()
				}
			}
		}
	}

	// Session-level: what SessionOptions.EnableProfiling writes in any
	// language, once the session is destroyed.
	sdir := filepath.Join(dir, "session")
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts, err := ort.NewSessionOptions()
	if err != nil {
		t.Fatal(err)
	}
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		t.Fatal(err)
	}
	if err := opts.EnableProfiling(filepath.Join(sdir, "onnxruntime_profile_")); err != nil {
		t.Fatal(err)
	}
	s, err := ort.NewDynamicAdvancedSession(model, inNames, outNames, opts)
	if err != nil {
		t.Fatal(err)
	}
	run("session", func(o []ort.Value) error { return s.Run(inputs, o) })
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	opts.Destroy()

	// instrument's profiled runs, files kept.
	rdir := filepath.Join(dir, "run")
	ctx := context.Background()
	is, err := instrument.NewDynamicSession(ctx, model, inNames, outNames, nil,
		instrument.WithProfiling(instrument.Profiling{Dir: rdir, KeepFiles: true}))
	if err != nil {
		t.Fatal(err)
	}
	if err := is.ProfileRuns(ctx, ProfiledRuns); err != nil {
		t.Fatal(err)
	}
	run("profiled", func(o []ort.Value) error { return is.Run(ctx, inputs, o) })
	if err := is.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := is.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{sdir, rdir} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			t.Logf("wrote %s", filepath.Join(d, e.Name()))
		}
		if len(ents) == 0 {
			t.Fatalf("ONNX Runtime wrote no profile in %s", d)
		}
	}
}

func newInput(dt ort.TensorElementDataType, dims []int64) (ort.Value, error) {
	n := ort.NewShape(dims...)
	switch dt {
	case ort.TensorElementDataTypeFloat:
		data := make([]float32, n.FlattenedSize())
		for i := range data {
			data[i] = float32(i%255) / 255
		}
		return ort.NewTensor(n, data)
	case ort.TensorElementDataTypeInt64:
		data := make([]int64, n.FlattenedSize())
		for i := range data {
			data[i] = 1
		}
		return ort.NewTensor(n, data)
	}
	return nil, fmt.Errorf("element type %v: only float and int64 inputs", dt)
}

// Node has onnxruntime-node at version (the project's cache, fetched by
// scripts/fetch.sh node) profile ProfiledRuns runs of model, an image model
// with one float input (such as ch_PP-OCRv4_det_infer.onnx) fed 1x3x64x64,
// with enableProfiling, as a Node.js user does, and returns the profile
// file it wrote.
func Node(t *testing.T, version, model string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, "needs Node.js (node) on PATH: %v", err)
	}
	mods := filepath.Join(ortlib.CacheDir(), "node", version, "node_modules")
	if _, err := os.Stat(filepath.Join(mods, "onnxruntime-node", "package.json")); err != nil {
		testenv.Missing(t, "needs onnxruntime-node %s (%v); install it with: scripts/fetch.sh node", version, err)
	}
	_, src, _, _ := runtime.Caller(0)
	dir := t.TempDir()
	cmd := exec.Command("node", filepath.Join(filepath.Dir(src), "profile.js"), mods, testenv.Model(t, model),
		filepath.Join(dir, "node_profile"), strconv.Itoa(ProfiledRuns))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("onnxruntime-node %s: %v\n%s", version, err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "node_profile*.json"))
	if len(files) != 1 {
		t.Fatalf("onnxruntime-node %s wrote %d profiles, want 1: %v", version, len(files), files)
	}
	return files[0]
}
