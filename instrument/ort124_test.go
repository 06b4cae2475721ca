package instrument

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/internal/ortapi"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

const envChild = "ORTEL_TEST_ORT_CHILD"

// TestOnnxRuntime124 reruns the profiling and lifecycle tests in a child
// process on ONNX Runtime 1.24.3, which has no run-level profiling: there
// sessions fall back to pre-warmed profiled copies, and a wrapped session
// asked to profile fails loudly. (A process loads one ONNX Runtime.)
func TestOnnxRuntime124(t *testing.T) {
	if os.Getenv(envChild) != "" {
		t.Skip("already the child")
	}
	lib := filepath.Join(ortlib.CacheDir(), "onnxruntime", "1.24.3", "libonnxruntime.so.1")
	if _, err := os.Stat(lib); err != nil {
		testenv.Missing(t, "needs ONNX Runtime 1.24.3 (%v); fetch it with: %s", err, ortlib.FetchHint)
	}
	run := "^(TestRunProfilingMatchesLibrary|TestSamplingExactConcurrentSafe|TestSlowRunProfilesTheNextRuns|TestProfileRunsEmitsOperatorSpans|TestFlushDeliversOpenWindow|TestWrapDynamic|TestWrapWithProfilingFailsWithoutRunProfiling|TestCloseBoundedByContext|TestRunsConcurrentSafe)$"
	args := []string{"-test.run", run, "-test.v", "-test.count=1"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envChild+"=1", ortlib.EnvVersion+"=1.24.3", ortlib.EnvLibraryPath+"="+lib)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tests on ONNX Runtime 1.24.3 failed: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestRunProfilingMatchesLibrary") {
		t.Fatalf("the child ran no test on 1.24.3:\n%s", out)
	}
	t.Logf("on 1.24.3: %d tests passed", strings.Count(string(out), "--- PASS"))
}

// TestRunProfilingMatchesLibrary: 1.24 has no run-level profiling, 1.25 and
// later have it.
func TestRunProfilingMatchesLibrary(t *testing.T) {
	testenv.RequireORT(t)
	err := ortapi.RunProfiling()
	v := ortapi.LibraryVersion()
	t.Logf("ONNX Runtime %s: run-level profiling: %v", v, err)
	if strings.HasPrefix(v, "1.24.") {
		if !errors.Is(err, ortapi.ErrUnsupported) {
			t.Fatalf("ONNX Runtime %s: RunProfiling() = %v, want ErrUnsupported", v, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("ONNX Runtime %s: RunProfiling() = %v, want nil", v, err)
	}
}
