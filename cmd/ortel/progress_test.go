package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestBenchProgressOnlyOnATerminal runs a real bench of silero-vad with
// standard error on a pseudo-terminal: the warm-up, measured-phase and
// profiling-pass indicators are drawn there (redrawn in place), and
// cleared before the next line. The same bench with standard error a pipe,
// or on the terminal with --quiet, draws none: no escape code at all.
func TestBenchProgressOnlyOnATerminal(t *testing.T) {
	testenv.RequireORT(t)
	model := testenv.Model(t, "silero_vad_v5.onnx")
	bin := buildOrtel(t)
	args := func(extra ...string) []string {
		return append([]string{"bench", "--runs", "300", "--warmup", "20", "--profile-runs", "5", "--no-hardware",
			"--no-telemetry", "--out", t.TempDir()}, append(extra, model)...)
	}
	onTerminal := benchOnPTY(t, bin, args()...)
	for _, want := range []string{"\r\x1b[Kwarming up  [", "\r\x1b[Kmeasuring  [", "/300  ", "\r\x1b[Kprofiling operators  [", "/5  "} {
		if !strings.Contains(onTerminal, want) {
			t.Errorf("stderr on a terminal has no %q:\n%q", want, onTerminal)
		}
	}
	if !strings.Contains(onTerminal, "\r\x1b[Kortel bench: profiling operators") {
		t.Errorf("the measured phase's indicator was not cleared before the next line:\n%q", onTerminal)
	}

	cmd := exec.Command(bin, args()...)
	cmd.Env = childEnv("CI=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("bench: %v\n%s%s", err, out, stderr.String())
	}
	if !strings.Contains(stderr.String(), "ortel bench: measuring") {
		t.Errorf("stderr into a pipe lost the progress lines:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "\x1b[") {
		t.Errorf("a progress indicator was drawn into a pipe:\n%q", stderr.String())
	}
	if quiet := benchOnPTY(t, bin, args("--quiet")...); strings.Contains(quiet, "\x1b[") {
		t.Errorf("--quiet drew a progress indicator:\n%q", quiet)
	}
}

// benchOnPTY runs bin with args, its standard error a pseudo-terminal,
// and returns what the terminal received.
func benchOnPTY(t *testing.T, bin string, args ...string) string {
	t.Helper()
	tty, output := testenv.RecordPTY(t)
	cmd := exec.Command(bin, args...)
	cmd.Env = childEnv("CI=")
	cmd.Stderr = tty
	out, err := cmd.Output()
	got := output()
	if err != nil {
		t.Fatalf("bench on a terminal: %v\n%s%s", err, out, got)
	}
	return got
}
