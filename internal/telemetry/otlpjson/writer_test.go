package otlpjson

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	traces := []*coltracepb.ExportTraceServiceRequest{sampleTraces("a"), sampleTraces("b"), {}}
	for _, req := range traces {
		if err := w.WriteTraces(req); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Errorf("wrote %d bytes before Flush; want buffering", buf.Len())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), "\n"); got != len(traces) {
		t.Fatalf("wrote %d lines, want %d", got, len(traces))
	}
	var got []*coltracepb.ExportTraceServiceRequest
	err := ReadTraces(&buf, func(req *coltracepb.ExportTraceServiceRequest) error {
		got = append(got, req)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(traces) {
		t.Fatalf("read %d requests, want %d", len(got), len(traces))
	}
	for i := range traces {
		if !proto.Equal(got[i], traces[i]) {
			t.Errorf("request %d differs:\ngot:  %v\nwant: %v", i, got[i], traces[i])
		}
	}
}

func TestWriterMetricsRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	want := sampleMetrics("m")
	if err := w.WriteMetrics(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := ReadMetrics(&buf, func(got *colmetricspb.ExportMetricsServiceRequest) error {
		n++
		if !proto.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		return nil
	})
	if err != nil || n != 1 {
		t.Fatalf("ReadMetrics: n=%d err=%v", n, err)
	}
}

func TestWriterConcurrentSafe(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				var err error
				if i%2 == 0 {
					err = w.WriteTraces(sampleTraces(fmt.Sprintf("w%d-%d", g, i)))
				} else {
					err = w.WriteMetrics(sampleMetrics(fmt.Sprintf("w%d-%d", g, i)))
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if err := w.Flush(); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Every line must be one whole request: a line that decodes as traces
	// has resourceSpans, one that decodes as metrics has resourceMetrics.
	seen := map[string]bool{}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("got %d lines, want %d", len(lines), writers*each)
	}
	for i, line := range lines {
		var tr coltracepb.ExportTraceServiceRequest
		var mr colmetricspb.ExportMetricsServiceRequest
		if err := Unmarshal([]byte(line), &tr); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if err := Unmarshal([]byte(line), &mr); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		var svc string
		switch {
		case len(tr.GetResourceSpans()) == 1:
			svc = tr.GetResourceSpans()[0].GetResource().GetAttributes()[0].GetValue().GetStringValue()
		case len(mr.GetResourceMetrics()) == 1:
			svc = mr.GetResourceMetrics()[0].GetResource().GetAttributes()[0].GetValue().GetStringValue()
		default:
			t.Fatalf("line %d is neither traces nor metrics: %.80s", i+1, line)
		}
		if seen[svc] {
			t.Errorf("request %s written twice", svc)
		}
		seen[svc] = true
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("disk full")
}

func TestWriterErrors(t *testing.T) {
	t.Run("write error is sticky", func(t *testing.T) {
		fw := &failWriter{}
		w := NewWriter(fw)
		if err := w.WriteTraces(sampleTraces("x")); err != nil {
			t.Fatalf("buffered write failed early: %v", err)
		}
		if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("Flush = %v, want the disk full error", err)
		}
		if err := w.WriteTraces(sampleTraces("y")); err == nil {
			t.Fatal("write after a failed flush succeeded")
		}
		if fw.n != 1 {
			t.Errorf("underlying writer called %d times after the failure, want 1", fw.n)
		}
	})
	t.Run("closed", func(t *testing.T) {
		w := NewWriter(new(bytes.Buffer))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteMetrics(sampleMetrics("x")); !errors.Is(err, ErrClosed) {
			t.Errorf("WriteMetrics after Close = %v, want ErrClosed", err)
		}
		if err := w.Flush(); !errors.Is(err, ErrClosed) {
			t.Errorf("Flush after Close = %v, want ErrClosed", err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
	})
	t.Run("bad request leaves writer usable", func(t *testing.T) {
		var buf bytes.Buffer
		w := NewWriter(&buf)
		bad := sampleTraces("bad")
		bad.ResourceSpans[0].ScopeSpans[0].Spans[0].TraceId = []byte{1}
		if err := w.WriteTraces(bad); err == nil || !strings.Contains(err.Error(), "traceId") {
			t.Fatalf("WriteTraces(1-byte trace id) = %v, want an error naming traceId", err)
		}
		if err := w.WriteTraces(sampleTraces("good")); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(buf.String(), "\n"); got != 1 {
			t.Errorf("got %d lines, want only the good one", got)
		}
	})
}

func BenchmarkWriteTraces(b *testing.B) {
	b.ReportAllocs()
	w := NewWriter(discard{})
	req := sampleTraces("bench")
	for b.Loop() {
		if err := w.WriteTraces(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadTraces(b *testing.B) {
	b.ReportAllocs()
	line, err := Marshal(sampleTraces("bench"))
	if err != nil {
		b.Fatal(err)
	}
	line = append(line, '\n')
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if err := ReadTraces(bytes.NewReader(line), func(*coltracepb.ExportTraceServiceRequest) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
