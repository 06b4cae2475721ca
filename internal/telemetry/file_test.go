package telemetry

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
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
