package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/test/testenv"
)

func TestAttachUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"attach"}, "--pid PID"},
		{[]string{"attach", "--pid", "x1"}, `--pid "x1"`},
		{[]string{"attach", "--pid", "0"}, `--pid "0"`},
		{[]string{"attach", "--pid", "12", "--duration", "-1s"}, "--duration"},
		{[]string{"attach", "extra"}, "takes no arguments"},
		{[]string{"attach", "--pid", "12", "--lib", "x.so"}, "not both"},
	} {
		code, _, stderr := ortel(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// A running Node.js process, attached by the CLI: its runs land in the
// OTLP/JSON files, and a cancelled context (what SIGINT does) detaches.
func TestAttachCommandNode(t *testing.T) {
	if st := attach.Check(); !st.Available {
		testenv.Missing(t, "attach cannot use eBPF here: %s", st.Reason)
	}
	model := testenv.Model(t, "silero_vad_v5.onnx")
	mods := filepath.Join(ortlib.CacheDir(), "node", "1.30.0", "node_modules")
	if _, err := os.Stat(filepath.Join(mods, "onnxruntime-node")); err != nil {
		testenv.Missing(t, "needs onnxruntime-node 1.30.0 (%v): scripts/fetch.sh node", err)
	}
	node := exec.Command("node", "../../internal/attach/testdata/client.js", mods)
	in, _ := node.StdinPipe()
	outPipe, _ := node.StdoutPipe()
	if err := node.Start(); err != nil {
		testenv.Missing(t, "node: %v", err)
	}
	defer func() { in.Close(); node.Process.Kill(); node.Wait() }()
	out := bufio.NewScanner(outPipe)
	say := func(cmd string) string {
		if cmd != "" {
			io.WriteString(in, cmd+"\n")
		}
		if !out.Scan() {
			t.Fatalf("node client ended")
		}
		return out.Text()
	}
	if got := say(""); got != "ready" {
		t.Fatalf("node: %q", got)
	}

	dir := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var stdout bytes.Buffer // read once run returned
	go func() {
		code := run(ctx, &env{stdout: &stdout, stderr: pw}, []string{"attach", "--pid", strconv.Itoa(node.Process.Pid), "--out", dir, "--format", "json"})
		pw.Close()
		done <- code
	}()
	stderr := bufio.NewScanner(pr)
	var log []string
	for stderr.Scan() {
		log = append(log, stderr.Text())
		if strings.Contains(stderr.Text(), "writing") {
			break
		}
	}
	say("create " + model)
	if got := say("run 50"); !strings.HasPrefix(got, "ran 50") {
		t.Fatalf("node: %q", got)
	}
	cancel()
	for stderr.Scan() {
		log = append(log, stderr.Text())
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d:\n%s", code, strings.Join(log, "\n"))
	}
	all := strings.Join(log, "\n")
	for _, want := range []string{"(node) uses", "probes on ONNX Runtime 1.30.0", "50 runs (0 failed), 1 session created", "interrupted"} {
		if !strings.Contains(all, want) {
			t.Errorf("stderr lacks %q:\n%s", want, all)
		}
	}
	// --format json: the same figures, on stdout, for scripts.
	var sum attachSummary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("attach --format json printed no JSON: %v\n%s", err, stdout.String())
	}
	if sum.Runs != 50 || sum.FailedRuns != 0 || sum.Sessions != 1 || sum.StoppedBecause != "interrupted" ||
		len(sum.Targets) != 1 || sum.Targets[0].PID != node.Process.Pid || len(sum.Libraries) == 0 || sum.Libraries[0].Version != "1.30.0" {
		t.Errorf("attach --format json: %+v", sum)
	}
	runs := 0
	for _, sp := range readSpans(t, filepath.Join(dir, "traces.jsonl")) {
		if sp.Name == "run silero_vad_v5" {
			runs++
		}
	}
	if runs != 50 {
		t.Errorf("%d run spans in traces.jsonl, want 50", runs)
	}
	m := lastMetric(t, filepath.Join(dir, "metrics.jsonl"), "onnxruntime.runs")
	if m == nil || len(m.GetSum().GetDataPoints()) != 1 || m.GetSum().GetDataPoints()[0].GetAsInt() != 50 {
		t.Errorf("onnxruntime.runs in the last export: %v, want 50", m)
	}
}

func TestDoctorReportsAttach(t *testing.T) {
	code, stdout, stderr := ortel(t, "doctor", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var d struct {
		Attach *attach.Status `json:"attach"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatal(err)
	}
	want := attach.Check()
	if d.Attach == nil || *d.Attach != want {
		t.Fatalf("doctor's attach section %+v, want %+v", d.Attach, want)
	}
	code, stdout, _ = ortel(t, "doctor")
	if code != 0 || !strings.Contains(stdout, "Attach (eBPF uprobes on running processes)") {
		t.Fatalf("doctor text lacks the attach section:\n%s", stdout)
	}
	if !want.Available && !strings.Contains(stdout, want.Reason) {
		t.Errorf("doctor does not say why attach is not available:\n%s", stdout)
	}
}

// Refusals name the input, exit 1, and create no output files.
func TestAttachRefusals(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	st := attach.Check()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lib", self}, "does not export OrtGetApiBase"},
		{[]string{"--lib", filepath.Join(t.TempDir(), "missing.so")}, "no such file"},
		{[]string{"--pid", strconv.Itoa(sleep.Process.Pid)}, "no ONNX Runtime library loaded"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := ortel(t, append(append([]string{"attach"}, tc.args...), "--out", out)...)
		want := tc.want
		if !st.Available {
			want = st.Reason
		}
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", tc.args, code, stderr, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a refusal created %s", tc.args, out)
		}
	}
}
