package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

func readABReport(t *testing.T, out string) *report.AB {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.AB == nil {
		t.Fatal("report.json has no ab section")
	}
	return rep.AB
}

// TestBenchABPlantedSlowSide: side B is a model doing twice the work of
// side A (16 MatMul+Add layers against 8); ortel bench --ab says B is
// slower, first, and exits 3 with --fail-on-regression.
func TestBenchABPlantedSlowSide(t *testing.T) {
	testenv.RequireORT(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.onnx"), filepath.Join(dir, "b.onnx")
	if err := onnxgen.MatMulAddChain(8, 256).WriteFile(a); err != nil {
		t.Fatal(err)
	}
	if err := onnxgen.MatMulAddChain(16, 256).WriteFile(b); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := ortel(t, "bench", "--ab", a, "--ab", b, "--threads", "1", "--duration", "8s",
		"--fail-on-regression", "--no-hardware", "--out", out)
	if code != exitRegression {
		t.Fatalf("exit %d, want %d (regression)\nstdout:\n%s\nstderr:\n%s", code, exitRegression, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "B is slower by ") {
		t.Errorf("stdout does not start with the verdict:\n%s", stdout)
	}
	if n := strings.Count(stdout, "\n"); n > 20 {
		t.Errorf("summary is %d lines, want at most 20:\n%s", n, stdout)
	}
	ab := readABReport(t, out)
	if ab.Verdict != "slower" || ab.A.ModelPath != a || ab.B.ModelPath != b {
		t.Errorf("verdict %q, sides %s / %s", ab.Verdict, ab.A.ModelPath, ab.B.ModelPath)
	}
	if p50, _ := ab.Stat("p50"); !p50.Bounded || *p50.Lower < 1.02 {
		t.Errorf("p50 ratio %+v, want bounded above 1.02", p50)
	}
	if len(ab.Blocks) != 2*ab.Pairs || len(ab.LoadAvgStart) != 3 {
		t.Errorf("%d blocks for %d pairs, load %v", len(ab.Blocks), ab.Pairs, ab.LoadAvgStart)
	}
	for _, f := range []string{"report.md", "report.html"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.Contains(string(b), "B is slower by") {
			t.Errorf("%s lacks the A/B verdict (%v)", f, err)
		}
	}
	// The same comparison without --fail-on-regression exits 0.
	code, _, stderr = ortel(t, "bench", "--ab", a, "--ab", b, "--threads", "1", "--duration", "3s", "--no-hardware", "--out", filepath.Join(dir, "out2"))
	if code != 0 {
		t.Errorf("without --fail-on-regression: exit %d\n%s", code, stderr)
	}
}

// TestBenchABIdenticalSides: the real Silero VAD against itself, same
// configuration on two sessions, says "no difference" within a wide
// threshold (a small cap on a shared machine).
func TestBenchABIdenticalSides(t *testing.T) {
	testenv.RequireORT(t)
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := ortel(t, "bench", "silero-vad", "--ab", "threads=1", "--ab", "--threads 1",
		"--ab-threshold", "25%", "--duration", "8s", "--no-hardware", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "No difference within ±25% at p50") {
		t.Errorf("want no difference first:\n%s", stdout)
	}
	ab := readABReport(t, out)
	if ab.Verdict != "no_difference" || ab.A.Description != ab.B.Description {
		t.Errorf("verdict %q; A %q, B %q", ab.Verdict, ab.A.Description, ab.B.Description)
	}
	if strings.Count(stderr, "is a known model") != 1 {
		t.Errorf("the model's note is said once per run, not per side:\n%s", stderr)
	}
}

// TestBenchABUsage: mistakes in --ab are usage errors naming the flag.
func TestBenchABUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"m.onnx", "--ab", "threads=1"}, "--ab takes two sides"},
		{[]string{"m.onnx", "--ab-threshold", "5%"}, "apply to --ab"},
		{[]string{"m.onnx", "--fail-on-regression"}, "apply to --ab"},
		{[]string{"--ab", "threads=1", "--ab", "threads=2"}, "side A names no MODEL"},
		{[]string{"m.onnx", "--ab", "threads=1", "--ab", "'threads=2"}, "a quote is not closed"},
		{[]string{"m.onnx", "--ab", "threads=1", "--ab", "--thread 2"}, "did you mean --threads"},
		{[]string{"m.onnx", "--ab", "threads=1", "--ab", "a.onnx b.onnx"}, "names 2 models"},
		{[]string{"m.onnx", "--ab", "a", "--ab", "b", "--ab-threshold", "x"}, "--ab-threshold"},
	} {
		code, _, stderr := ortel(t, append([]string{"bench"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("ortel bench %s: exit %d, want 2 and %q in:\n%s", strings.Join(c.args, " "), code, c.want, stderr)
		}
	}
}

// TestBenchABSideRefusesTune: a side asking for what an A/B does not
// measure is refused, naming the flag.
func TestBenchABSideRefusesTune(t *testing.T) {
	m := chainModel(t)
	code, _, stderr := ortel(t, "bench", m, "--ab", "threads=1", "--ab", "--scenario server --qps 5", "--no-hardware", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(stderr, "server scenario") {
		t.Errorf("exit %d, want 2 naming the server scenario:\n%s", code, stderr)
	}
}

func TestSideWords(t *testing.T) {
	isFlag := func(n string) bool { return n == "opt-level" || n == "threads" || n == "session-config" }
	for _, c := range []struct{ in, want string }{
		{"opt-level=basic", "--opt-level=basic"},
		{"--opt-level basic threads=2", "--opt-level|basic|--threads=2"},
		{"session-config='session.intra_op.allow_spinning=0'", "--session-config=session.intra_op.allow_spinning=0"},
		{"'my model.onnx'", "my model.onnx"},
		{"x=1.onnx", "x=1.onnx"}, // not a flag: a model
	} {
		got, err := sideWords(c.in, isFlag)
		if err != nil || strings.Join(got, "|") != c.want {
			t.Errorf("sideWords(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestTuneFinalDuel: --tune ends with the best configuration against the
// default one, interleaved A/B, its verdict in the sweep's report; with
// --tune-duel 0 there is none.
func TestTuneFinalDuel(t *testing.T) {
	m := chainModel(t)
	for _, c := range []struct {
		duel string
		want bool
	}{{"2s", true}, {"0", false}} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := ortel(t, "bench", m, "--tune", "--runs", "20", "--tune-opt-levels", "basic", "--tune-threads", "1",
			"--tune-execution-modes", "sequential", "--tune-duel", c.duel, "--profile-runs", "0", "--no-hardware", "--out", out)
		if code != 0 {
			t.Fatalf("--tune-duel %s: exit %d\n%s\n%s", c.duel, code, stdout, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rep report.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		d := rep.Tune.Duel
		if (d != nil) != c.want {
			t.Fatalf("--tune-duel %s: duel %v, want present %v", c.duel, d != nil, c.want)
		}
		if d == nil {
			continue
		}
		if !strings.Contains(d.A.Description, "default configuration") || !strings.Contains(d.B.Description, "opt level basic, intra-op threads 1") ||
			d.Pairs == 0 || d.Headline == "" {
			t.Errorf("duel A %q, B %q, %d pairs, headline %q", d.A.Description, d.B.Description, d.Pairs, d.Headline)
		}
		if !strings.Contains(stdout, "final duel") || !strings.Contains(stdout, d.Headline) {
			t.Errorf("the printed report lacks the duel:\n%s", stdout)
		}
	}
}

// verdictFirst says whether the summary starts with a verdict line.
func verdictFirst(stdout string) bool {
	for _, p := range []string{"B is faster by ", "B is slower by ", "No difference within ", "Undecided "} {
		if strings.HasPrefix(stdout, p) {
			return true
		}
	}
	return false
}

// sideBlocks counts the blocks each side ran.
func sideBlocks(ab *report.AB) map[string]int {
	n := map[string]int{}
	for _, b := range ab.Blocks {
		n[b.Side]++
	}
	return n
}

// TestBenchABAcrossORTVersions: the real Silero VAD under ONNX Runtime
// 1.24.3 (side A) and 1.30.0 (side B), each side in a child process of
// its own: the verdict comes first, each side reports the release its
// library says it is and its own library, both sides ran the same number
// of blocks, and the runtime section says it is side A's.
func TestBenchABAcrossORTVersions(t *testing.T) {
	testenv.RequireORT(t)
	libA, libB := testenv.ORTLibrary(t, "1.24.3"), testenv.ORTLibrary(t, "1.30.0")
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := ortel(t, "bench", "silero-vad", "--ab", "ort=1.24.3", "--ab", "ort=1.30.0", "--threads", "1",
		"--duration", "6s", "--no-hardware", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !verdictFirst(stdout) {
		t.Errorf("stdout does not start with the verdict:\n%s", stdout)
	}
	for _, w := range []string{"ONNX Runtime 1.24.3", "ONNX Runtime 1.30.0"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("the summary does not name %q:\n%s", w, stdout)
		}
	}
	ab := readABReport(t, out)
	if ab.A.ORTVersion != "1.24.3" || ab.B.ORTVersion != "1.30.0" {
		t.Errorf("sides report ONNX Runtime %q and %q, want 1.24.3 and 1.30.0", ab.A.ORTVersion, ab.B.ORTVersion)
	}
	if ab.A.LibraryPath != libA || ab.B.LibraryPath != libB {
		t.Errorf("libraries %s and %s, want %s and %s", ab.A.LibraryPath, ab.B.LibraryPath, libA, libB)
	}
	if n := sideBlocks(ab); n["A"] != n["B"] || n["A"] != ab.Pairs || ab.Pairs == 0 {
		t.Errorf("blocks per side %v for %d pairs", n, ab.Pairs)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Runtime.ORTVersion != "1.24.3" || !strings.Contains(rep.Runtime.Holds, "side A") || !strings.Contains(rep.Runtime.Holds, "1.30.0") {
		t.Errorf("runtime section %+v: want side A's, saying so and naming side B's", rep.Runtime)
	}
}

// TestBenchABSameLibraryInChildren: two copies of one library are two
// files, so each side runs in a child process; the sides being the same,
// the verdict never claims a difference: "no difference" (a wide
// threshold, a short cap), or "undecided" when the machine is too busy to
// narrow the interval in 6 s (seen under make test's parallel packages
// with the race detector: +6.4% [-0.4%, +27.6%], 85 of 91 pairs
// disturbed).
func TestBenchABSameLibraryInChildren(t *testing.T) {
	testenv.RequireORT(t)
	lib := testenv.ORTLibrary(t, "1.30.0")
	dir := t.TempDir()
	cp := filepath.Join(dir, "copy", "libonnxruntime.so.1")
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(cp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := ortel(t, "bench", "silero-vad", "--ab", "ort="+cp, "--ab", "ort="+lib, "--threads", "1",
		"--ab-threshold", "25%", "--duration", "6s", "--no-hardware", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "No difference within ±25% at p50") && !strings.HasPrefix(stdout, "Undecided") {
		t.Errorf("want no difference (or undecided) first, never a difference, for identical sides:\n%s", stdout)
	}
	if !strings.Contains(stderr, "in a child process") {
		t.Errorf("the sides did not run in child processes:\n%s", stderr)
	}
	ab := readABReport(t, out)
	if ab.A.LibraryPath != cp || ab.B.ORTVersion != ab.A.ORTVersion {
		t.Errorf("side A %s %s, side B %s %s", ab.A.LibraryPath, ab.A.ORTVersion, ab.B.LibraryPath, ab.B.ORTVersion)
	}
}

// abChildren lists this process's child processes running an A/B side:
// side label -> process id.
func abChildren(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) || f[0] == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 2 && args[1] == abSideCommand {
			pid, _ := strconv.Atoi(filepath.Base(d))
			out[args[2]] = pid
		}
	}
	return out
}

// TestBenchABChildKilled: a side's child process killed while measuring
// gives a clear error naming the side and its library, exit 1, no report,
// no hang, and no child left behind (nor a zombie).
func TestBenchABChildKilled(t *testing.T) {
	testenv.RequireORT(t)
	testenv.ORTLibrary(t, "1.24.3")
	testenv.ORTLibrary(t, "1.30.0")
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr testenv.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), &env{stdout: &stdout, stderr: &stderr}, []string{"bench", "silero-vad",
			"--ab", "ort=1.24.3", "--ab", "ort=1.30.0", "--threads", "1", "--duration", "10m", "--no-hardware", "--out", out})
	}()
	// Wait until blocks are being measured, then kill side B's child.
	for !strings.Contains(stderr.String(), "A/B: blocks of") {
		select {
		case code := <-done:
			t.Fatalf("exit %d before measuring:\n%s", code, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	pid, ok := abChildren(t)["B"]
	if !ok {
		t.Fatalf("no child process for side B among %v", abChildren(t))
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	code := <-done
	if code != exitFailure {
		t.Errorf("exit %d, want 1", code)
	}
	for _, w := range []string{"A/B side B (ONNX Runtime library ", "its child process ended", "signal: killed"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "report.json")); err == nil {
		t.Error("a report was written for a comparison that failed")
	}
	if left := abChildren(t); len(left) > 0 {
		t.Errorf("child processes left: %v", left)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("the killed child %d is still in the process table (a zombie)", pid)
	}
}
