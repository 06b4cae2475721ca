package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestExitCodes drives one command line per row of the exit-code table
// (compare's regression, 3, is TestCompareGate's "planted regression
// gated"; an unreadable report, 1, TestCompareBadInput's "missing").
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"success", []string{"version"}, exitOK},
		{"failure: missing model", []string{"bench", "--out", filepath.Join(dir, "out"), filepath.Join(dir, "nope.onnx")}, exitFailure},
		{"failure: missing process", []string{"agent", "--pid", strconv.Itoa(deadPID(t)), "--duration", "10ms", "--out", filepath.Join(dir, "agent")}, exitFailure},
		{"usage: unknown flag", []string{"bench", "--frobs", "1", "model.onnx"}, exitUsage},
		{"usage: unknown command", []string{"frobnicate"}, exitUsage},
		{"usage: bad flag value", []string{"agent", "--interval", "1ms"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, stdout, stderr := ortel(t, tt.args...); code != tt.code {
				t.Errorf("%v: exit %d, want %d\n%s%s", tt.args, code, tt.code, stdout, stderr)
			}
		})
	}
}

// TestTelemetryLostExitCode: a bench or agent whose collector cannot be
// reached finishes its work, spools what it could not send, then exits 4
// with one line per signal saying what was spooled and how to send it.
// Before, bench exited 0 with every span dropped, and agent 1, like a
// failure of its own work. An import's spans are its work: see the
// "import" subtest.
func TestTelemetryLostExitCode(t *testing.T) {
	model := chainModel(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+closedPort(t))
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	benchOut := t.TempDir()
	tests := []struct {
		name  string
		args  []string
		lines []string
	}{
		{"bench", []string{"bench", model, "--runs", "3", "--warmup", "0", "--profile-runs", "1", "--no-hardware", "--quiet", "--out", benchOut},
			[]string{"ortel bench: telemetry spooled: traces: ", "ortel bench: telemetry spooled: metrics: ", "ortel replay "}},
		{"agent", []string{"agent", "--interval", "50ms", "--duration", "100ms", "--quiet", "--out", t.TempDir()},
			[]string{"ortel agent: telemetry spooled: metrics: ", "ortel replay "}},
	}
	// An import's spans are its work, not telemetry on the side: when the
	// collector never acknowledges them the import fails (1), saying how
	// many were written.
	t.Run("import", func(t *testing.T) {
		code, stdout, stderr := ortel(t, "import", "--out", t.TempDir(), gunzipTo(t, "../../instrument/profile/testdata/cls_2runs.json.gz",
			filepath.Join(t.TempDir(), "onnxruntime_profile__2026-11-22_10-31-07.json")))
		if code != exitFailure {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitFailure, stdout, stderr)
		}
		if !strings.Contains(stderr, "(0 spans written)") {
			t.Errorf("stderr does not say how many spans were written:\n%s", stderr)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ortel(t, tt.args...)
			if code != exitTelemetryLost {
				t.Fatalf("exit %d, want %d\n%s%s", code, exitTelemetryLost, stdout, stderr)
			}
			for _, l := range tt.lines {
				if n := strings.Count(stderr, l); n != 1 {
					t.Errorf("stderr has %d lines starting %q, want 1:\n%s", n, l, stderr)
				}
			}
			if tt.name == "bench" && !strings.Contains(stdout, "latency     ") {
				t.Errorf("bench printed no report before failing:\n%s", stdout)
			}
			if tt.name == "bench" {
				b, err := os.ReadFile(filepath.Join(benchOut, "report.json"))
				if err != nil {
					t.Fatal(err)
				}
				var rep struct{ Telemetry report.Telemetry }
				if err := json.Unmarshal(b, &rep); err != nil {
					t.Fatal(err)
				}
				if tel := rep.Telemetry; tel.SpansSpooled == 0 || tel.SpansDropped != 0 || tel.MetricExportsSpooled == 0 || tel.SpoolDir == "" {
					t.Errorf("report.json telemetry = %+v, want spans and metrics spooled, none dropped", tel)
				}
			}
		})
	}
}

// TestHelpListsExitCodes: `ortel help` and the README carry the same table.
func TestHelpListsExitCodes(t *testing.T) {
	code, stdout, _ := ortel(t, "help")
	if code != 0 {
		t.Fatalf("help: exit %d", code)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range exitCodes {
		if !strings.Contains(stdout, fmt.Sprintf("  %d  %s\n", c.code, c.meaning)) {
			t.Errorf("help does not list exit code %d", c.code)
		}
		if !strings.Contains(string(readme), fmt.Sprintf("| %d | %s |", c.code, c.meaning)) {
			t.Errorf("README's exit-code table lacks the row | %d | %s |", c.code, c.meaning)
		}
	}
}

// TestAgentWatchedProcessExits: the agent watches a child that is killed
// while it runs; it says so once and keeps collecting the rest until it
// is stopped, then exits 0.
func TestAgentWatchedProcessExits(t *testing.T) {
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	pid := child.Process.Pid
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("ORTEL_HOST_ROOT", "") // the child is in this machine's /proc

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stdout strings.Builder
	done := make(chan int, 1)
	go func() {
		code := run(ctx, &env{stdout: &stdout, stderr: pw}, []string{"agent", "--pid", strconv.Itoa(pid), "--interval", "20ms", "--out", out})
		pw.Close()
		done <- code
	}()

	var all strings.Builder
	sc := bufio.NewScanner(pr)
	exited := fmt.Sprintf("pid %d exited", pid)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		switch {
		case strings.Contains(line, "ortel agent: started in") && !killed:
			if !strings.Contains(line, "process") {
				t.Errorf("the process source did not start: %s", line)
			}
			killed = true
			child.Process.Kill()
			child.Wait() // reaped: a zombie would still have its /proc entry
		case strings.Contains(line, exited):
			cancel() // the exit was noticed: stop the agent
		}
	}
	code := <-done
	text := all.String()
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	if n := strings.Count(text, exited); n != 1 {
		t.Errorf("the exit of pid %d is reported %d times, want once:\n%s", pid, n, text)
	}
	if !strings.Contains(text, "ortel agent: stopped after") {
		t.Errorf("the agent did not stop cleanly:\n%s", text)
	}
	if lastMetric(t, filepath.Join(out, "metrics.jsonl"), "system.cpu.time") == nil {
		t.Error("the other sources stopped exporting")
	}
}

// deadPID is the process id of a child that exited and was reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

func TestAgentMissingProcess(t *testing.T) {
	pid := deadPID(t)
	code, _, stderr := ortel(t, "agent", "--pid", strconv.Itoa(pid), "--duration", "10ms", "--out", t.TempDir())
	if code != exitFailure || !strings.Contains(stderr, fmt.Sprintf("--pid %d: no such process", pid)) {
		t.Errorf("exit %d, want %d with \"no such process\":\n%s", code, exitFailure, stderr)
	}
	if strings.Contains(stderr, "started in") {
		t.Errorf("the agent started without its process:\n%s", stderr)
	}
}
