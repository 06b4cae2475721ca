package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
