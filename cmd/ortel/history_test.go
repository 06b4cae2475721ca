package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/test/testenv"
)

// ciRun is one CI job's bench of a model: its level (p50 relative to the
// base) and its ONNX Runtime version.
type ciRun struct {
	level float64
	ort   string
}

// writeCISequence writes one report.json per CI run under dir/NN/, each a
// minute after the last, with run-to-run noise of 10% (this machine's) and
// 200 latency samples; it returns the files.
func writeCISequence(t *testing.T, dir string, seed uint64, runs []ciRun) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 9))
	var files []string
	for i, r := range runs {
		level := 300e-6 * r.level * math.Exp(0.10*rng.NormFloat64())
		xs := make([]float64, 200)
		for j := range xs {
			xs[j] = level * math.Exp(0.05*rng.NormFloat64())
		}
		s := stats.Summarize(xs)
		rep := &report.Report{SchemaVersion: report.SchemaVersion, Tool: report.Tool{Name: "ortel", Version: "test"},
			CreatedAt:  time.Date(2026, 11, 2, 9, i, 0, 0, time.UTC),
			Host:       report.Host{Hostname: "ci-runner", OS: "linux", Arch: "amd64", CPUModel: "Test CPU", LogicalCPUs: 2},
			Runtime:    report.Runtime{ORTVersion: r.ort, Providers: []string{"CPUExecutionProvider"}},
			Model:      report.Model{Name: "vad", SHA256: "f00d", Inputs: []report.Tensor{{Name: "input", Type: "float", Shape: []int64{1, 512}}}},
			Config:     report.Config{Runs: 200, Batch: 1, Session: &report.SessionOptions{OptLevel: "all", ExecutionMode: "sequential"}},
			Latency:    report.Latency{Summary: s, Samples: xs},
			Throughput: report.Throughput{RunsPerS: 1 / s.Mean, ItemsPerS: 1 / s.Mean},
		}
		p := filepath.Join(dir, fmt.Sprintf("%02d", i), "report.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := rep.Write(p); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

func repeat(n int, r ciRun) []ciRun {
	out := make([]ciRun, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// TestHistoryCheckGate gates synthetic CI sequences at this machine's
// noise: 12 runs of a base, then runs that are noise only (exit 0), 1.5x
// slower with a new ONNX Runtime (exit 3, the Markdown names the version),
// or 0.6x (exit 0 with an improvement noted); and the slower runs checked
// as candidate reports without being recorded.
func TestHistoryCheckGate(t *testing.T) {
	base := ciRun{1, "1.30.0"}
	cases := []struct {
		name      string
		after     []ciRun
		candidate bool
		code      int
		contains  []string
	}{
		{"noise only", repeat(4, base), false, exitOK, []string{"### ortel history check: no change", "No change point: `vad` p50 (16 runs)"}},
		{"regression with an ONNX Runtime upgrade", repeat(4, ciRun{1.5, "1.31.0"}), false, exitRegression,
			[]string{"#### Regression: p50 of `vad`", "slower**", "| ONNX Runtime version | 1.30.0 | 1.31.0 |", "from run 13"}},
		{"improvement", repeat(4, ciRun{0.6, "1.30.0"}), false, exitOK, []string{"#### Improvement: p50 of `vad`", "faster**", "No recorded setting changed"}},
		{"regression in candidate reports", repeat(4, ciRun{1.5, "1.31.0"}), true, exitRegression, []string{"#### Regression: p50 of `vad`", "from run new"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "history.db")
			files := writeCISequence(t, filepath.Join(dir, "runs"), uint64(i+1), append(repeat(12, base), c.after...))
			imported, candidates := files, []string(nil)
			if c.candidate {
				imported, candidates = files[:12], files[12:]
			}
			code, out, errOut := ortel(t, append([]string{"history", "import", "--db", db, "--commit", "main"}, imported...)...)
			if code != exitOK || !strings.Contains(out, fmt.Sprintf("imported %d runs", len(imported))) {
				t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
			}
			code, out, errOut = ortel(t, append([]string{"history", "check", "--db", db, "--format", "md"}, candidates...)...)
			if code != c.code {
				t.Errorf("check: exit %d, want %d\n%s%s", code, c.code, out, errOut)
			}
			for _, want := range c.contains {
				if !strings.Contains(out, want) {
					t.Errorf("check output lacks %q:\n%s", want, out)
				}
			}
			if c.candidate {
				if _, out, _ := ortel(t, "history", "list", "--db", db); !strings.Contains(out, "vad    12 ") {
					t.Errorf("candidates were recorded:\n%s", out)
				}
			}
		})
	}
}

func TestHistoryCommandErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ORTEL_HISTORY", "")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no subcommand", []string{"history"}, exitUsage, "want a subcommand"},
		{"unknown subcommand", []string{"history", "frobnicate"}, exitUsage, `unknown subcommand "frobnicate"`},
		{"no db", []string{"history", "list"}, exitUsage, "no history: give --db"},
		{"bad metric", []string{"history", "show", "--db", db, "--metric", "p42", "vad"}, exitUsage, `metric "p42"`},
		{"bad min change", []string{"history", "check", "--db", db, "--min-change", "lots"}, exitUsage, "--min-change"},
		{"empty history", []string{"history", "check", "--db", db}, exitFailure, "has no runs"},
		{"broken report", []string{"history", "import", "--db", db, bad}, exitFailure, "bad.json"},
		{"prune without a rule", []string{"history", "prune", "--db", db}, exitUsage, "--before T"},
		{"bad prune age", []string{"history", "prune", "--db", db, "--before", "soon"}, exitUsage, `--before "soon"`},
		{"prometheus without URL", []string{"history", "prometheus"}, exitUsage, "no Prometheus URL"},
		{"bad quantile", []string{"history", "prometheus", "--url", "http://127.0.0.1:1", "--quantile", "0.42"}, exitUsage, "quantile 0.42"},
		{"unknown show model", []string{"history", "show", "--db", db, "nope"}, exitFailure, `no runs of model "nope"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := ortel(t, c.args...)
			if code != c.code || !strings.Contains(errOut+out, c.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", code, c.code, c.want, out, errOut)
			}
		})
	}
}

// TestBenchHistory records real bench runs of Silero VAD with --history
// (and ORTEL_HISTORY) and reads them back with list and show.
func TestBenchHistory(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "silero_vad_v5.onnx")
	dir := t.TempDir()
	db := filepath.Join(dir, "runs.db")
	t.Setenv("ORTEL_COMMIT", "abc123")
	for i, args := range [][]string{{"--history", db}, nil} {
		if args == nil {
			t.Setenv("ORTEL_HISTORY", db)
		}
		code, out, errOut := ortel(t, append([]string{"bench", "--runs", "30", "--warmup", "5", "--profile-runs", "1", "--no-hardware", "--quiet",
			"--out", filepath.Join(dir, fmt.Sprint(i)), "silero-vad"}, args...)...)
		if code != exitOK || !strings.Contains(errOut, fmt.Sprintf("recorded as run %d in history %s", i+1, db)) {
			t.Fatalf("bench: exit %d\n%s%s", code, out, errOut)
		}
	}
	code, out, errOut := ortel(t, "history", "show", "--db", db, "silero_vad_v5")
	if code != exitOK || !strings.Contains(out, "p50 (median latency): 2 runs, 0 change points") || strings.Count(out, "abc123") != 2 {
		t.Errorf("show: exit %d\n%s%s", code, out, errOut)
	}
	html := filepath.Join(dir, "vad.html")
	if code, out, errOut := ortel(t, "history", "show", "--db", db, "--format", "html", "--file", html, "silero_vad_v5"); code != exitOK {
		t.Fatalf("show --format html: exit %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), `data-chart="series"`) {
		t.Errorf("HTML page %s without its chart (%v)", html, err)
	}
}
