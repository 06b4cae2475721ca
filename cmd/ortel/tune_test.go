package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// shellWords splits a command line the way a POSIX shell splits words made
// of plain characters and single-quoted strings (what bench.ShellQuote writes).
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	quoted, word := false, false
	for _, r := range s {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, word = true, true
		case r == ' ':
			if word {
				out = append(out, cur.String())
				cur.Reset()
				word = false
			}
		default:
			cur.WriteRune(r)
			word = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", s)
	}
	if word {
		out = append(out, cur.String())
	}
	return out
}

// TestBenchTuneOnPaddleOCR sweeps the real PaddleOCR detection model at a
// small input: every configuration is measured, the best is named with its
// p50 interval, the ranking agrees with the intervals, and the reproducing
// command parses back through bench's own flags to the best configuration.
func TestBenchTuneOnPaddleOCR(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx")
	out := t.TempDir()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "bench", "paddleocr-det", "--tune", "--shape", "x=1,3,64,64",
		"--tune-threads", "1", "--runs", "6", "--tune-rounds", "2", "--warmup", "1",
		"--profile-runs", "0", "--no-hardware", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Tuning sweep (", "← best", "  best      ", "  reproduce ortel bench "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	tu := rep.Tune
	if tu == nil {
		t.Fatal("report.json has no tune section")
	}
	// 4 optimization levels × 1 thread count × 2 execution modes, CPU only
	// (other providers of this build cannot load here, or are swept too).
	if len(tu.Rows) < 8 || tu.Rows[0].Label == "" || tu.Rounds != 2 || tu.RunsPerConfig != 6 {
		t.Fatalf("tune %d rows, rounds %d, runs %d: %+v", len(tu.Rows), tu.Rounds, tu.RunsPerConfig, tu)
	}
	if tu.Best != 0 {
		t.Fatalf("best is row %d, want 0 (rows fastest first)", tu.Best)
	}
	seen := map[[3]string]bool{}
	for i, r := range tu.Rows {
		if r.Error != "" {
			if len(r.Providers) == 0 {
				t.Errorf("CPU row %s failed: %s", r.Label, r.Error)
			}
			continue
		}
		if r.Latency.Count != 6 || !r.P50.Sufficient || *r.P50.Lower > r.P50.Estimate || r.P50.Estimate > *r.P50.Upper {
			t.Errorf("row %d %s: %d runs, p50 %+v", i, r.Label, r.Latency.Count, r.P50)
		}
		if i > 0 && r.P50.Estimate < tu.Rows[i-1].P50.Estimate {
			t.Errorf("row %d (%s, p50 %g) ranks after a slower row (%g)", i, r.Label, r.P50.Estimate, tu.Rows[i-1].P50.Estimate)
		}
		if len(r.Providers) == 0 {
			seen[[3]string{r.OptLevel, r.ExecutionMode, ""}] = true
		}
		if i > 0 {
			overlap := *r.P50.Lower <= *tu.Rows[0].P50.Upper
			if overlap != slices.Contains(tu.TiedWith, i) {
				t.Errorf("row %d %s: interval %v vs best %v, but tied_with %v", i, r.Label, r.P50, tu.Rows[0].P50, tu.TiedWith)
			}
		}
	}
	for _, o := range []string{"disable", "basic", "extended", "all"} {
		for _, m := range []string{"sequential", "parallel"} {
			if !seen[[3]string{o, m, ""}] {
				t.Errorf("no measured CPU row for opt %s, %s", o, m)
			}
		}
	}
	if tu.Distinguishable == slices.Contains(tu.TiedWith, tu.RunnerUp) {
		t.Errorf("distinguishable %v but tied_with %v holds the runner-up %d", tu.Distinguishable, tu.TiedWith, tu.RunnerUp)
	}
	best := tu.Rows[tu.Best]
	if rep.Latency.Count != 6 || rep.Latency.P50 != best.Latency.P50 || rep.Config.Session.OptLevel != best.OptLevel {
		t.Errorf("the report's latency/config are not the best configuration's: %+v vs %+v", rep.Latency.Summary, best.Latency)
	}

	// The reproducing command parses back to the best configuration.
	if tu.Command != best.Command || !strings.Contains(stdout, tu.Command) {
		t.Fatalf("command %q (best row %q) not printed", tu.Command, best.Command)
	}
	words := shellWords(t, tu.Command)
	if len(words) < 3 || words[0] != "ortel" || words[1] != "bench" {
		t.Fatalf("command %q", tu.Command)
	}
	var f benchAction
	fs := newFlagSet("bench")
	f.flags(fs)
	pos, err := parse(fs.FlagSet, words[2:])
	if err != nil {
		t.Fatalf("parse %q: %v", tu.Command, err)
	}
	if len(pos) != 1 || pos[0] != "paddleocr-det" {
		t.Fatalf("model %v, want paddleocr-det", pos)
	}
	if err := f.validateGroups(); err != nil {
		t.Fatalf("validate %q: %v", tu.Command, err)
	}
	cfg, err := f.config(pos[0])
	if err != nil {
		t.Fatalf("validate %q: %v", tu.Command, err)
	}
	if cfg.Session.OptLevel != best.OptLevel || cfg.IntraOpThreads != best.IntraOpThreads || cfg.Session.ExecutionMode != best.ExecutionMode ||
		cfg.Tune != nil || cfg.Runs != 6 || !slices.Equal(cfg.Shapes["x"], []int64{1, 3, 64, 64}) || len(cfg.Shapes) != 1 {
		t.Errorf("command %q parses to opt %q threads %d mode %q tune %v runs %d shapes %v; best is %+v",
			tu.Command, cfg.Session.OptLevel, cfg.IntraOpThreads, cfg.Session.ExecutionMode, cfg.Tune, cfg.Runs, cfg.Shapes, best)
	}
}

func TestBenchTuneUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--tune", "--scenario", "server", "--qps", "5"},
		{"--tune", "--batch", "1,2"},
		{"--tune", "--duration", "1s"},
		{"--tune", "--runs", "auto"},
		{"--tune", "--sla", "10ms"},
		{"--tune", "--save-optimized", "x.onnx"},
		{"--tune", "--tune-threads", "0"},
		{"--tune", "--tune-threads", "1,1"},
		{"--tune", "--tune-opt-levels", "fast"},
		{"--tune", "--tune-execution-modes", "sequential,sequential"},
		{"--tune", "--tune-rounds", "0"},
		{"--tune", "--runs", "5"},
		{"--tune-threads", "1"},
	} {
		code, _, stderr := ortel(t, append(append([]string{"bench"}, args...), "model.onnx")...)
		if code != 2 || !strings.Contains(stderr, "tune") {
			t.Errorf("bench %v: exit %d, want 2 naming --tune: %s", args, code, stderr)
		}
	}
}
