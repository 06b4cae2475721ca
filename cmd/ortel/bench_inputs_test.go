package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestBenchRenamedVADInputs: a renamed copy of Silero VAD (no preset by
// its name) gets one error listing its three inputs and a command that
// then works as given; the failed attempt leaves no files, and the known
// model by name announces the inputs it brings.
func TestBenchRenamedVADInputs(t *testing.T) {
	testenv.RequireORT(t)
	vad := testenv.Model(t, "silero_vad_v5.onnx")
	b, err := os.ReadFile(vad)
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "my_vad.onnx")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	short := []string{"--runs", "20", "--warmup", "1", "--profile-runs", "0", "--no-hardware", "--quiet"}

	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := ortel(t, "bench", model, "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{`input "input" float[?,?]`, `input "state" float[2,?,128]`, `input "sr" int64 scalar`, "--value sr=16000"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the error lacks %q:\n%s", want, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the failed attempt left %s (%v)", out, err)
	}
	var command string
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "ortel bench ") {
			command = l
		}
	}
	args := strings.Fields(strings.TrimPrefix(command, "ortel "))
	if len(args) < 2 || args[1] != model {
		t.Fatalf("no whole command for %s in:\n%s", model, stderr)
	}
	out = t.TempDir()
	if code, stdout, stderr := ortel(t, append(append(args, "--out", out), short...)...); code != 0 {
		t.Fatalf("%s: exit %d\n%s\n%s", command, code, stdout, stderr)
	}
	r, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil || r.Latency.Count != 20 {
		t.Fatalf("the suggested command's report: %v, %+v", err, r)
	}

	// The known model by name says what it applies.
	code, _, stderr = ortel(t, "bench", "silero-vad", "--runs", "5", "--warmup", "0", "--profile-runs", "0", "--no-hardware", "--out", t.TempDir())
	if code != 0 || !strings.Contains(stderr, "silero-vad is a known model: using its usual inputs, --shape input=1,512 --shape state=2,1,128 --value sr=16000") {
		t.Errorf("exit %d; the preset is not announced:\n%s", code, stderr)
	}
}

// TestBenchFailedRunLeavesNothing: a run that fails inside ONNX Runtime
// (Silero VAD with a sample rate it rejects) removes the output folder it
// made, and shows ONNX Runtime's own log lines only with --verbose.
func TestBenchFailedRunLeavesNothing(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "silero_vad_v5.onnx")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	for _, verbose := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "out")
		args := []string{"bench", "silero-vad", "--value", "sr=0", "--runs", "5", "--warmup", "0", "--profile-runs", "0", "--no-hardware", "--out", out}
		if verbose {
			args = append(args, "--verbose")
		}
		code, stdout, stderr := ortel(t, args...)
		if code != 1 || !strings.Contains(stderr, "first run of model") {
			t.Fatalf("exit %d, want 1 with ONNX Runtime's error\n%s\n%s", code, stdout, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("the failed run left %s (%v)", out, err)
		}
		// ORT writes its log lines to the process's stderr, not to the
		// command's; what the command prints must not need them.
		if !strings.Contains(stderr, "removed "+out) {
			t.Errorf("stderr does not say the folder was removed:\n%s", stderr)
		}
	}
}

// TestBenchORTOption: --ort names the library: the one loaded already is
// taken, a release not fetched says how to fetch it, a missing file is
// said plainly (exit 1, nothing written); the cached releases complete.
func TestBenchORTOption(t *testing.T) {
	model := chainModel(t)
	lib := testenv.ORTLibrary(t, "1.30.0")
	dir := t.TempDir()
	loaded, _ := ortlib.Init()
	code, _, stderr := ortel(t, "bench", model, "--ort", loaded, "--runs", "5", "--profile-runs", "0", "--no-hardware", "--out", filepath.Join(dir, "ok"))
	if code != 0 {
		t.Errorf("--ort with the loaded library: exit %d\n%s", code, stderr)
	}
	for _, c := range []struct{ ort, want string }{
		{"1.27.0", "--ort 1.27.0: ONNX Runtime 1.27.0 is not in the ortel cache"},
		{"1.27.0", "fetch it with: ortel fetch ort --version 1.27.0"},
		{filepath.Join(dir, "none.so"), "no such file"},
	} {
		out := filepath.Join(dir, "bad")
		code, _, stderr := ortel(t, "bench", model, "--ort", c.ort, "--runs", "5", "--no-hardware", "--out", out)
		if code != exitFailure || !strings.Contains(stderr, c.want) {
			t.Errorf("--ort %s: exit %d, want 1 and %q in:\n%s", c.ort, code, c.want, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--ort %s: %s was written", c.ort, out)
		}
	}
	got := complete([]string{"bench", "--ort", ""})
	if !slices.Contains(got, "1.30.0") || !slices.Contains(got, ":file") {
		t.Errorf("ortel __complete bench --ort '' = %v, want the cached releases (1.30.0 from %s) and files", got, lib)
	}
}
