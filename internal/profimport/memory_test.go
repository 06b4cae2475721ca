package profimport

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// heapSink discards spans and samples the heap at every batch: the
// import's high-water mark, read at the point where the most is held.
type heapSink struct {
	sample []metrics.Sample
	peak   uint64
}

func newHeapSink() *heapSink {
	return &heapSink{sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

func (s *heapSink) Write(context.Context, []Span) error {
	metrics.Read(s.sample)
	s.peak = max(s.peak, s.sample[0].Value.Uint64())
	return nil
}
func (s *heapSink) Close() error { return nil }

// TestImportMemoryBounded streams generated profiles (never held whole in
// memory) of real det runs, and of node events with no model_run at all
// (everything spilled), and checks that the heap's high-water mark grows by
// less than 32 MB (docs/ARCHITECTURE.md, "Budgets") and does not grow with the input's
// size. It catches the pending events buffered without limit.
func TestImportMemoryBounded(t *testing.T) {
	// Collect garbage early (10% over the live heap instead of 100%), so
	// the high-water mark measures what the import holds, not when the
	// collector happened to run: at the default, uncollected garbage alone
	// moved the mark by 16 MB from run to run.
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	src := realProfile(t, "det_ort1.30.0.json.gz")
	small, big := int64(8<<20), int64(96<<20)
	if testing.Short() || raceEnabled {
		big = 40 << 20
	}
	measure := func(size int64, noRuns bool) (growthMB float64, st Stats) {
		pr, pw := io.Pipe()
		go func() {
			_, err := Synthesize(pw, bytes.NewReader(src), SynthOptions{Bytes: size, NoRuns: noRuns})
			pw.CloseWithError(err)
		}()
		runtime.GC()
		sink := newHeapSink()
		sink.Write(context.Background(), nil)
		base := sink.peak
		sink.peak = 0
		st, err := Import(context.Background(), pr, sink, Config{SpillDir: t.TempDir()})
		if noRuns != (err != nil) {
			t.Fatalf("%d MB, no runs %v: %v", size>>20, noRuns, err)
		}
		sink.Write(context.Background(), nil)
		return float64(int64(sink.peak)-int64(base)) / (1 << 20), st
	}
	measure(1<<20, false) // warm up what every run shares
	sm, _ := measure(small, false)
	bg, st := measure(big, false)
	if st.Nodes != st.NodeEvents || st.Nodes == 0 {
		t.Fatalf("stats %+v", st)
	}
	nr, nst := measure(big, true)
	if nst.Outside != nst.NodeEvents {
		t.Fatalf("no-run profile: %+v", nst)
	}
	t.Logf("heap high-water growth: %.1f MB at %d MB, %.1f MB at %d MB, %.1f MB at %d MB without runs (%d events spilled)",
		sm, small>>20, bg, big>>20, nr, big>>20, nst.Spilled)
	for _, m := range []struct {
		what string
		mb   float64
	}{{"small", sm}, {"big", bg}, {"big, no runs", nr}} {
		if m.mb > 32 {
			t.Errorf("%s: heap grew by %.1f MB, over the 32 MB budget", m.what, m.mb)
		}
	}
	// The high-water mark includes garbage not yet collected: allow for it.
	if bg > sm+16 || nr > sm+16 {
		t.Errorf("heap growth follows the input size: %.1f MB, %.1f MB, %.1f MB", sm, bg, nr)
	}
}
