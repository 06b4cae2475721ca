package history

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestRealBenchChange builds a history from real bench runs in ONNX
// Runtime with the graph optimization level changed part-way: six commits
// at "all" (ONNX Runtime's default), then six at "disable". The same runs
// go into SQLite and into a real PostgreSQL; from each, the change point
// must be found at the seventh run, for the worse, attributed to the
// optimization level, with op types whose time moved, and the gate must
// call it a regression.
//
// The model is onnxgen.FoldedWeight: its weight is the product of two
// constants, which constant folding computes once at "all" and which every
// run computes at "disable": 160 times the work, 3.4 → 45.5 µs at the
// p50 on a 2-core AMD EPYC VM. The step has to be that large on every CPU: this test used Silero VAD before,
// whose fusions were worth 1.5x on one machine and nothing on another (a
// CI machine measured both levels at 120 µs and failed).
//
// The runs are measured interleaved, not in commit order. A shared
// machine's load changes over seconds and moves a short bench's p50 by
// 10-40% (3.3x once, in a make test): six runs of one level measured in a
// row could hold a step of their own (a second change point) or end on a
// slow one (the change found a run early), both seen at load 10-20. Round
// r measures one run of each level, in alternating order, and its runs
// become commits order[r] and 6+order[r]: the first three commits of each
// level were measured in rounds 1, 3 and 5, the last three in rounds 2, 4
// and 6, so load over any stretch of rounds falls on both levels, and on
// both halves of each, alike. Each run is recorded at its commit's time,
// as a history built commit by commit would be.
func TestRealBenchChange(t *testing.T) {
	testenv.RequireORT(t)
	model := filepath.Join(t.TempDir(), "folded_weight.onnx")
	if err := onnxgen.FoldedWeight(160).WriteFile(model); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	levels := []string{"all", "disable"}
	order := []int{0, 3, 1, 4, 2, 5} // round → commit within a level
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	runs := make([]Run, 2*len(order))
	for round, pos := range order {
		for k := range levels {
			side := (k + round) % 2 // alternate which level goes first
			level, i := levels[side], side*len(order)+pos
			rep, err := bench.Run(ctx, bench.Config{
				ModelPath: model, ModelName: "folded-weight",
				Batch: 1, Runs: 300, Warmup: 20, ProfileRuns: 3, Seed: 1, Session: bench.SessionOptions{OptLevel: level},
			})
			if err != nil {
				t.Fatalf("bench run %d (%s): %v", i+1, level, err)
			}
			run, err := FromReport(rep, fmt.Sprintf("c%02d", i+1), "bench")
			if err != nil {
				t.Fatal(err)
			}
			run.Time = base.Add(time.Duration(i) * time.Minute)
			t.Logf("round %d: run %2d opt level %-7s p50 %.1fµs", round+1, i+1, level, run.Metrics["p50"].V*1e6)
			runs[i] = run
		}
	}
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			s := openStore(t, k.location(t))
			for _, r := range runs {
				if _, _, err := s.Record(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			series, err := Analyze(ctx, s, Config{Model: "folded-weight"})
			if err != nil {
				t.Fatal(err)
			}
			if len(series) != 1 || len(series[0].Points) != 12 {
				t.Fatalf("%d series (want 1) of %v points (want 12)", len(series), series)
			}
			ser := series[0]
			if len(ser.Changes) != 1 {
				t.Fatalf("%d change points %+v, want 1 at run 7", len(ser.Changes), ser.Changes)
			}
			c := ser.Changes[0]
			t.Logf("%s; %v", ser.Headline(c), c.Explanation())
			if c.Index != 6 || !c.Worse || c.CommitBefore != "c06" || c.CommitAfter != "c07" {
				t.Errorf("change at point %d (worse %v, commits %s..%s), want point 6 (run 7), worse, c06..c07", c.Index, c.Worse, c.CommitBefore, c.CommitAfter)
			}
			var level *SettingChange
			for i, sc := range c.Settings {
				if sc.Name == "graph optimization level" {
					level = &c.Settings[i]
				}
			}
			if level == nil || level.Before != "all" || level.After != "disable" {
				t.Errorf("attribution %+v does not name the optimization level all → disable", c.Settings)
			}
			if len(c.OpTypes) == 0 {
				t.Error("no op types in the attribution, though every run profiled 3 runs")
			}
			v := Check(series, Config{})
			if v[0].Status != StatusRegression {
				t.Errorf("check: %s, want %s", v[0].Status, StatusRegression)
			}
		})
	}
}
