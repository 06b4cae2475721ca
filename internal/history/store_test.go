package history

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/test/testenv"
)

// storeKind opens fresh, empty stores of one kind.
type storeKind struct {
	name string
	// location returns where a new, empty store lives.
	location func(t testing.TB) string
}

// storeKinds returns SQLite and a real PostgreSQL server started for the
// test (skipped locally, failed under CI, when PostgreSQL is missing).
func storeKinds(t testing.TB) []storeKind {
	var pg *testenv.Postgres
	missing := testenv.PostgresMissing()
	if missing == "" {
		pg = testenv.StartPostgres(t) // stopped when t ends
	}
	n := 0
	return []storeKind{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "sub", "history.db") }},
		{"postgres", func(t testing.TB) string {
			if pg == nil {
				testenv.Missing(t, "%s", missing)
			}
			n++
			return pg.Database(t, fmt.Sprintf("history_%d", n))
		}},
	}
}

func openStore(t *testing.T, location string) *Store {
	t.Helper()
	s, err := Open(context.Background(), location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// syntheticRun is a run of model at time i (minutes after a fixed start)
// with p50 p and the given settings changed from the defaults.
func syntheticRun(model string, i int, p50 float64, set map[string]string) Run {
	settings := []analysis.Setting{{Name: "ONNX Runtime version", Value: "1.30.0"}, {Name: "graph optimization level", Value: "all"}, {Name: "intra-op threads", Value: "0"}}
	for j := range settings {
		if v, ok := set[settings[j].Name]; ok {
			settings[j].Value = v
		}
	}
	lo, hi := p50*0.97, p50*1.03
	return Run{
		Time: time.Date(2026, 11, 1, 0, i, 0, 0, time.UTC), Model: model, ModelSHA256: "abc",
		Workload: "single-stream input=1,512", Machine: "linux/amd64 Test CPU ×2", Host: "ci-1",
		Commit: fmt.Sprintf("c%03d", i), Tool: "test", Source: "test", Settings: settings,
		Metrics: map[string]Value{"p50": {V: p50, Lower: &lo, Upper: &hi}, "throughput": {V: 1 / p50}},
		OpTypes: []OpTime{{OpType: "Conv", Provider: "CPUExecutionProvider", SelfS: p50 * 0.6, Calls: 10},
			{OpType: "LSTM", Provider: "CPUExecutionProvider", SelfS: p50 * 0.2, Calls: 10}},
		Fingerprint: fmt.Sprintf("%s-%d", model, i),
	}
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Run("migrations", func(t *testing.T) {
				loc := k.location(t)
				for range 3 { // an empty store, then twice on an up-to-date one
					s, err := Open(ctx, loc)
					if err != nil {
						t.Fatal(err)
					}
					v, err := s.Version(ctx)
					s.Close()
					if err != nil || v != SchemaVersion() {
						t.Fatalf("schema version %d (%v), want %d", v, err, SchemaVersion())
					}
				}
			})
			t.Run("upgrade from version 1", func(t *testing.T) {
				loc := k.location(t)
				// A store written by an ortel that knew only the first
				// migration gets the second on open.
				old := migrations
				migrations = migrations[:1]
				s1, err := Open(ctx, loc)
				migrations = old
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := s1.Record(ctx, syntheticRun("m", 1, 1e-3, nil)); err != nil {
					t.Fatal(err)
				}
				s1.Close()
				s2, err := Open(ctx, loc)
				if err != nil {
					t.Fatal(err)
				}
				defer s2.Close()
				if v, _ := s2.Version(ctx); v != SchemaVersion() {
					t.Fatalf("schema version %d after the upgrade, want %d", v, SchemaVersion())
				}
				if runs, err := s2.Runs(ctx, Filter{}); err != nil || len(runs) != 1 {
					t.Fatalf("%d runs after the upgrade (%v), want the 1 recorded before", len(runs), err)
				}
			})
			t.Run("newer schema refused", func(t *testing.T) {
				loc := k.location(t)
				s, err := Open(ctx, loc)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, description, applied_us) VALUES (?, 'from the future', 0)`), SchemaVersion()+1); err != nil {
					t.Fatal(err)
				}
				s.Close()
				if _, err := Open(ctx, loc); err == nil {
					t.Fatal("a store with a newer schema opened")
				}
			})
			t.Run("record and read back", func(t *testing.T) {
				s := openStore(t, k.location(t))
				want := syntheticRun("vad", 1, 2.5e-4, map[string]string{"graph optimization level": "basic"})
				id, added, err := s.Record(ctx, want)
				if err != nil || !added || id == 0 {
					t.Fatalf("Record = %d, %v, %v", id, added, err)
				}
				id2, added, err := s.Record(ctx, want)
				if err != nil || added || id2 != id {
					t.Fatalf("recording the same run again = %d, %v, %v; want %d, false", id2, added, err, id)
				}
				if _, _, err := s.Record(ctx, syntheticRun("other", 2, 1e-3, nil)); err != nil {
					t.Fatal(err)
				}
				runs, err := s.Runs(ctx, Filter{Model: "vad"})
				if err != nil || len(runs) != 1 {
					t.Fatalf("Runs = %d runs, %v; want 1", len(runs), err)
				}
				got := runs[0]
				if !got.Time.Equal(want.Time) || got.Commit != want.Commit || got.Setting("graph optimization level") != "basic" ||
					got.Metrics["p50"].V != 2.5e-4 || *got.Metrics["p50"].Lower != *want.Metrics["p50"].Lower ||
					got.Metrics["throughput"].Lower != nil || len(got.OpTypes) != 2 || got.OpTypes[0].OpType != "Conv" || got.OpTypes[0].SelfS != want.OpTypes[0].SelfS {
					t.Errorf("read back %+v\nwant %+v", got, want)
				}
				series, err := s.Series(ctx)
				if err != nil || len(series) != 2 || series[1].Model != "vad" || series[1].Runs != 1 {
					t.Errorf("Series = %+v, %v", series, err)
				}
			})
			t.Run("prune", func(t *testing.T) {
				s := openStore(t, k.location(t))
				for i := range 10 {
					for _, m := range []string{"a", "b"} {
						if _, _, err := s.Record(ctx, syntheticRun(m, i, 1e-3, nil)); err != nil {
							t.Fatal(err)
						}
					}
				}
				n, err := s.Prune(ctx, time.Date(2026, 11, 1, 0, 2, 0, 0, time.UTC), 0)
				if err != nil || n != 4 {
					t.Fatalf("pruning before minute 2 deleted %d (%v), want 4", n, err)
				}
				n, err = s.Prune(ctx, time.Time{}, 5)
				if err != nil || n != 6 {
					t.Fatalf("keeping 5 per series deleted %d (%v), want 6", n, err)
				}
				runs, _ := s.Runs(ctx, Filter{Model: "a"})
				if len(runs) != 5 || runs[0].Time.Minute() != 5 {
					t.Fatalf("after pruning: %d runs of a, first at minute %d; want 5 from minute 5", len(runs), runs[0].Time.Minute())
				}
				var orphans int
				if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM metrics WHERE run_id NOT IN (SELECT id FROM runs)`).Scan(&orphans); err != nil || orphans != 0 {
					t.Errorf("%d metrics of deleted runs left (%v)", orphans, err)
				}
			})
		})
	}
}

func TestStoreConcurrentSafe(t *testing.T) {
	ctx := context.Background()
	for _, k := range storeKinds(t) {
		t.Run(k.name, func(t *testing.T) {
			loc := k.location(t)
			// Several processes' worth of stores open (and migrate) the same
			// new history at once and record into it.
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for w := range 4 {
				wg.Go(func() {
					s, err := Open(ctx, loc)
					if err != nil {
						errs <- err
						return
					}
					defer s.Close()
					for i := range 5 {
						if _, _, err := s.Record(ctx, syntheticRun("m", w*10+i, 1e-3, nil)); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			s := openStore(t, loc)
			runs, err := s.Runs(ctx, Filter{})
			if err != nil || len(runs) != 20 {
				t.Fatalf("%d runs (%v), want 20", len(runs), err)
			}
			var migrated int
			if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&migrated); err != nil || migrated != len(migrations) {
				t.Fatalf("%d migrations recorded (%v), want %d: one each", migrated, err, len(migrations))
			}
		})
	}
}
