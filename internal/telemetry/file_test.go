package telemetry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/test/testenv"
)

func TestFileSink(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "traces.jsonl")
	sink, err := openSink(path)
	if err != nil {
		t.Fatal(err)
	}
	client := fileTraceClient{sink: sink}
	if err := client.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				rs := []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: "s", SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}}}}}}}
				if err := client.UploadTraces(t.Context(), rs); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Every upload is on disk before Stop: each is flushed as written.
	spans, lines := readSpansFile(t, path)
	if lines != writers*each || len(spans) != writers*each {
		t.Errorf("file holds %d lines and %d spans before Stop, want %d", lines, len(spans), writers*each)
	}

	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if err := client.UploadTraces(canceled, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("upload with a canceled context = %v", err)
	}
	if err := client.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := client.Stop(t.Context()); err != nil {
		t.Errorf("second Stop = %v", err)
	}
	if err := client.UploadTraces(t.Context(), nil); !errors.Is(err, errSinkClosed) {
		t.Errorf("upload after Stop = %v, want errSinkClosed", err)
	}
	if _, lines2 := readSpansFile(t, path); lines2 != lines {
		t.Errorf("lines changed after Stop: %d -> %d", lines, lines2)
	}
}

func TestOpenSinkErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(file, "traces.jsonl"), dir} {
		if s, err := openSink(path); err == nil {
			_ = s.close()
			t.Errorf("openSink(%q) succeeded", path)
		}
	}
}

// TestFileOutputRecoversFromAFullDisk: the embedded default's traces file
// on a real file system that fills up: the export that meets the full disk
// fails and is counted (its spans dropped), leaves nothing of itself in the
// file, and once space is freed the next exports are written again — the
// sink never stops for good after one failure.
func TestFileOutputRecoversFromAFullDisk(t *testing.T) {
	cleanEnv(t)
	dir := testenv.Tmpfs(t, 512<<10)
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: dir, MetricInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	tr := tel.TracerProvider.Tracer("full-disk")
	batch := func(n int) {
		for range n {
			_, s := tr.Start(ctx, "run")
			s.End()
		}
		_ = tel.TracerProvider.ForceFlush(ctx)
	}
	batch(10)
	fill := testenv.Fill(t, dir)
	batch(200) // meets the full disk
	batch(200)
	if st := tel.Stats(); st.SpansDropped != 400 || st.SpansExported != 10 {
		t.Fatalf("while the disk is full: %+v, want 400 spans dropped and counted, 10 exported", st)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	batch(30)
	batch(30)
	if err := tel.Shutdown(ctx); err == nil {
		t.Error("shutdown says nothing of the 400 spans dropped")
	}
	st := tel.Stats()
	if st.SpansExported != 70 || st.SpansDropped != 400 || st.SpansEnded != 470 {
		t.Errorf("stats %+v, want 70 exported (10 before, 60 after the disk was freed), 400 dropped, 470 ended", st)
	}
	if lost := strings.Join(st.Lost(), "\n"); !strings.Contains(lost, "400 of 470 spans") || !strings.Contains(lost, "no space left on device") {
		t.Errorf("Lost() = %q, want the count and the cause", lost)
	}
	spans, lines := readSpansFile(t, filepath.Join(dir, TracesFileName)) // fails on a damaged record
	if len(spans) != 70 || lines != 3 {
		t.Errorf("the file holds %d spans in %d records, want 70 in 3", len(spans), lines)
	}
}

// TestFileOutputRepairsACrashedFile: a file a crash left with a cut last
// record: the next run removes the cut record, says so, and appends whole
// records after the good ones.
func TestFileOutputRepairsACrashedFile(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	ctx := testContext(t)
	run := func() *Telemetry {
		tel, err := Setup(ctx, Config{OutputDir: dir, MetricInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		emit(t, tel)
		if err := tel.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		return tel
	}
	run()
	path := filepath.Join(dir, TracesFileName)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The crash: half of a record, no newline.
	if err := os.WriteFile(path, append(append([]byte(nil), good...), good[:len(good)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	tel := run()
	if w := strings.Join(tel.Resolved.Warnings, "\n"); !strings.Contains(w, path+": removed an incomplete last record") {
		t.Errorf("warnings %q do not say the cut record was removed", w)
	}
	spans, lines := readSpansFile(t, path) // fails on a damaged record
	if len(spans) != 4 || lines != 2 {
		t.Errorf("the file holds %d spans in %d records, want the 4 of the two runs in 2", len(spans), lines)
	}
}
