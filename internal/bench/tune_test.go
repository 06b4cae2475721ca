package bench

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

func TestDefaultTuneThreads(t *testing.T) {
	for cpus, want := range map[int][]int{0: {1}, 1: {1}, 2: {1, 2}, 4: {1, 2, 4}, 6: {1, 2, 4, 6}, 16: {1, 2, 4, 8, 16}} {
		if got := DefaultTuneThreads(cpus); !slices.Equal(got, want) {
			t.Errorf("DefaultTuneThreads(%d) = %v, want %v", cpus, got, want)
		}
	}
}

func TestParseTuneLists(t *testing.T) {
	if got, err := ParseTuneThreads("1, 2,4"); err != nil || !slices.Equal(got, []int{1, 2, 4}) {
		t.Errorf("ParseTuneThreads = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,1", "x", "2,-1"} {
		if _, err := ParseTuneThreads(bad); err == nil || !strings.Contains(err.Error(), "Tune.Threads") {
			t.Errorf("ParseTuneThreads(%q) = %v, want an error naming the flag", bad, err)
		}
	}
	if got, err := ParseTuneList("Tune.OptLevels", "Extended,all", ParseOptLevel); err != nil || !slices.Equal(got, []string{"extended", "all"}) {
		t.Errorf("ParseTuneList = %v, %v", got, err)
	}
	for _, bad := range []string{"all,all", "all,", "fast"} {
		if _, err := ParseTuneList("Tune.OptLevels", bad, ParseOptLevel); err == nil {
			t.Errorf("ParseTuneList(%q) accepted", bad)
		}
	}
}

// TestTuneConfigsFixedDimensions: a dimension the configuration fixes is
// not swept, a given list wins, and the product is bounded.
func TestTuneConfigsFixedDimensions(t *testing.T) {
	cpu, _ := ParseProvider("cpu")
	tu := &Tune{Threads: []int{1, 2}, Providers: []Provider{cpu}}
	cfg := &Config{Session: SessionOptions{OptLevel: "extended"}}
	got, err := tu.configs(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// extended only × 2 thread counts × 2 modes.
	if len(got) != 4 {
		t.Fatalf("%d configurations: %+v", len(got), got)
	}
	for _, c := range got {
		if c.opt != "extended" || c.provider != nil {
			t.Errorf("configuration %+v: the fixed level or the CPU provider was not kept", c)
		}
	}
	cfg = &Config{IntraOpThreads: 3, Session: SessionOptions{ExecutionMode: "parallel"}}
	got, err = (&Tune{Providers: []Provider{cpu}}).configs(cfg)
	if err != nil || len(got) != 4 || got[0].threads != 3 || got[0].mode != "parallel" {
		t.Errorf("fixed threads and mode: %+v, %v", got, err)
	}
	many := make([]int, 10)
	for i := range many {
		many[i] = i + 1
	}
	if _, err := (&Tune{Threads: many, Providers: []Provider{cpu}}).configs(&Config{}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("80 configurations accepted: %v", err)
	}
}

func entryWith(label string, lat ...float64) *tuneEntry {
	e := &tuneEntry{row: report.TuneRow{Label: label}}
	e.row.P50 = stats.QuantileInterval(sortedCopy(lat), 0.5, stats.DefaultConfidence)
	return e
}

// TestRankTune: fastest p50 first, failed and unbounded rows last, the
// best told apart from the runner-up only when the intervals do not overlap.
func TestRankTune(t *testing.T) {
	fast := []float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7}
	slow := []float64{3, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7}
	near := []float64{1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.1, 2.2}
	failed := entryWith("failed")
	failed.row.Error = "could not create the session"
	few := entryWith("few", 0.1, 0.2) // unbounded: fewer runs than p50 needs

	tu := rankTune([]*tuneEntry{entryWith("slow", slow...), failed, few, entryWith("fast", fast...)})
	labels := func(tu *report.Tune) []string {
		var out []string
		for _, r := range tu.Rows {
			out = append(out, r.Label)
		}
		return out
	}
	if got := labels(tu); !slices.Equal(got, []string{"fast", "slow", "failed", "few"}) {
		t.Errorf("order %v", got)
	}
	if tu.Best != 0 || tu.RunnerUp != 1 || !tu.Distinguishable || len(tu.TiedWith) != 0 {
		t.Errorf("separate intervals: best %d runner-up %d distinguishable %v tied %v", tu.Best, tu.RunnerUp, tu.Distinguishable, tu.TiedWith)
	}

	tu = rankTune([]*tuneEntry{entryWith("near", near...), entryWith("fast", fast...), entryWith("slow", slow...)})
	if got := labels(tu); !slices.Equal(got, []string{"fast", "near", "slow"}) {
		t.Errorf("order %v", got)
	}
	if tu.Distinguishable || !slices.Equal(tu.TiedWith, []int{1}) {
		t.Errorf("overlapping intervals: distinguishable %v tied %v", tu.Distinguishable, tu.TiedWith)
	}

	tu = rankTune([]*tuneEntry{failed, few})
	if tu.Best != -1 || tu.RunnerUp != -1 {
		t.Errorf("nothing measured, yet best %d runner-up %d", tu.Best, tu.RunnerUp)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"x=1,3,64,64": "x=1,3,64,64", "a b": "'a b'", "it's": `'it'\''s'`, "": "''", "/tmp/m.onnx": "/tmp/m.onnx",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTuneCommand(t *testing.T) {
	cuda, _ := ParseProvider("cuda")
	cfg := &Config{ModelPath: "/m/det.onnx", Runs: 20, Warmup: 3, Seed: 7, InterOpThreads: 2,
		Values:  map[string]string{"sr": "16000"},
		Session: SessionOptions{Config: map[string]string{"session.intra_op.allow_spinning": "0"}, ProviderOptions: map[string]string{"device_id": "1"}},
		Tune:    &Tune{Model: "my model.onnx"}}
	in := []report.Tensor{{Name: "x", Shape: []int64{1, 3, 64, 64}}}
	got := tuneCommand(cfg, tuneConfig{opt: "extended", threads: 2, mode: "parallel"}, in)
	want := "ortel bench --opt-level extended --threads 2 --execution-mode parallel --inter-threads 2 --session-config session.intra_op.allow_spinning=0 --shape x=1,3,64,64 --value sr=16000 --runs 20 --warmup 3 --seed 7 'my model.onnx'"
	if got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
	cfg.WarmupAuto = true
	got = tuneCommand(cfg, tuneConfig{opt: "all", threads: 1, mode: "sequential", provider: &cuda}, in)
	if !strings.Contains(got, "--provider CUDAExecutionProvider --inter-threads 2") || !strings.Contains(got, "--provider-option device_id=1") ||
		!strings.Contains(got, "--warmup auto") {
		t.Errorf("provider command %s", got)
	}
}

// FuzzParseTuneLists: the --tune-* parsers never panic, accept only what
// they promise (thread counts of 1 or more, known words, none twice), and
// read back what they accepted.
func FuzzParseTuneLists(f *testing.F) {
	for _, s := range []string{"1,2,4", " 2 ", "0", "1,,2", "all,extended", "sequential,parallel", "-1", "9999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ns, err := ParseTuneThreads(s); err == nil {
			parts := make([]string, len(ns))
			for i, n := range ns {
				if n < 1 || slices.Index(ns, n) != i {
					t.Fatalf("ParseTuneThreads(%q) = %v", s, ns)
				}
				parts[i] = strconv.Itoa(n)
			}
			back, err := ParseTuneThreads(strings.Join(parts, ","))
			if err != nil || !slices.Equal(back, ns) {
				t.Fatalf("round trip of %v: %v, %v", ns, back, err)
			}
		}
		for _, parse := range []func(string) (string, error){ParseOptLevel, ParseExecutionMode} {
			ws, err := ParseTuneList("Tune.X", s, parse)
			if err != nil {
				if !strings.Contains(err.Error(), "Tune.X") {
					t.Fatalf("error %q does not name the flag", err)
				}
				continue
			}
			for i, w := range ws {
				if v, err := parse(w); err != nil || v != w || w == "" || slices.Index(ws, w) != i {
					t.Fatalf("ParseTuneList(%q) = %v", s, ws)
				}
			}
		}
	})
}

// TestRunTune sweeps a small real model through Run: every configuration
// is measured with its runs, the report describes the best, and a sweep
// where no configuration can even create its session fails naming them.
func TestRunTune(t *testing.T) {
	model := dynModel(t)
	cpu, _ := ParseProvider("cpu")
	var blocks [][]string // the configurations of each round, in run order
	rep, err := Run(context.Background(), Config{
		ModelPath: model, Runs: 6, Warmup: 1,
		Tune: &Tune{OptLevels: []string{"disable", "basic", "extended", "all"}, Threads: []int{1}, ExecutionModes: []string{"sequential"}, Providers: []Provider{cpu}, Rounds: 3},
		tuneHook: func(round int, label string) {
			if round == len(blocks) {
				blocks = append(blocks, nil)
			}
			blocks[round] = append(blocks[round], label)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tu := rep.Tune
	if tu == nil || len(tu.Rows) != 4 || tu.Best != 0 || tu.Rounds != 3 {
		t.Fatalf("tune %+v", tu)
	}
	// Interleaved: every round runs every configuration once, and the
	// rounds do not all share one order.
	if len(blocks) != 3 {
		t.Fatalf("%d rounds: %v", len(blocks), blocks)
	}
	for r, b := range blocks {
		sorted := slices.Sorted(slices.Values(b))
		if len(b) != 4 || len(slices.Compact(sorted)) != 4 {
			t.Errorf("round %d ran %v, want each of the 4 configurations once", r, b)
		}
	}
	if slices.Equal(blocks[0], blocks[1]) && slices.Equal(blocks[1], blocks[2]) {
		t.Errorf("every round ran the configurations in the same order %v: not shuffled", blocks[0])
	}
	for _, r := range tu.Rows {
		if r.Error != "" || r.Latency.Count != 6 || r.CreationS <= 0 || r.FirstRunS <= 0 || !strings.Contains(r.Command, "--opt-level "+r.OptLevel) {
			t.Errorf("row %+v", r)
		}
	}
	if rep.Latency.Count != 6 || len(rep.Latency.Samples) != 6 || rep.Config.Session.OptLevel != tu.Rows[0].OptLevel || rep.Config.IntraOpThreads != 1 {
		t.Errorf("report latency %d runs, config %+v: not the best row's", rep.Latency.Count, rep.Config)
	}

	failing := Provider{Name: "NoSuchExecutionProvider", append: func(*ort.SessionOptions, map[string]string) error { return errors.New("no device") }}
	_, err = Run(context.Background(), Config{
		ModelPath: model, Runs: 6,
		Tune: &Tune{OptLevels: []string{"all"}, Threads: []int{1}, ExecutionModes: []string{"sequential"}, Providers: []Provider{failing}},
	})
	if err == nil || !strings.Contains(err.Error(), "no configuration of model") || !strings.Contains(err.Error(), "NoSuchExecutionProvider") {
		t.Errorf("a sweep where every configuration fails: %v", err)
	}
}
