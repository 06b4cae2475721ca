package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/internal/otlpjson"
)

// This file is the embedded default: with no collector configured, traces
// and metrics go to OTLP/JSON lines files (package otlpjson), the format the
// collector's file exporter writes, so a run can be replayed later into any
// collector with its otlpjsonfile receiver.

// fileSink is one append-only OTLP/JSON lines file. Every export is one
// line, flushed at once, so a crash loses nothing already exported.
type fileSink struct {
	path string

	mu     sync.Mutex
	f      *os.File // nil for the console sink
	w      *otlpjson.Writer
	closed bool

	rot Rotation
	cw  *countingWriter // nil without rotation
}

// consoleSink writes OTLP/JSON lines to w, shared by both signals'
// console exporters so their lines never interleave. Closing it only
// flushes: w is not ours to close.
func consoleSink(w io.Writer) *fileSink {
	return &fileSink{path: "standard output", w: otlpjson.NewWriter(w)}
}

// openSink opens path for appending, creating it and its folder.
func openSink(path string) (*fileSink, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("telemetry: create the output folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("telemetry: open the output file: %w", err)
	}
	return &fileSink{path: path, f: f, w: otlpjson.NewWriter(f)}, nil
}

var errSinkClosed = errors.New("telemetry output file is closed")

// write writes one request as a line and flushes it.
func (s *fileSink) write(ctx context.Context, write func(*otlpjson.Writer) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("write %s: %w", s.path, errSinkClosed)
	}
	if err := write(s.w); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	if err := s.rotateIfFull(); err != nil {
		return fmt.Errorf("telemetry: %w (the export was written)", err)
	}
	return nil
}

// close flushes and closes the file; later calls return nil.
func (s *fileSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.f == nil {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", s.path, err)
		}
		return nil
	}
	s.closed = true
	err := s.w.Close()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", s.path, err)
	}
	return nil
}

// fileTraceClient is an otlptrace.Client that writes each upload as one
// ExportTraceServiceRequest line. otlptrace.New turns it into a span
// exporter, so spans are converted to OTLP by the SDK's own code.
type fileTraceClient struct{ sink *fileSink }

func (c fileTraceClient) Start(context.Context) error { return nil }

func (c fileTraceClient) Stop(context.Context) error { return c.sink.close() }

func (c fileTraceClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	return c.sink.write(ctx, func(w *otlpjson.Writer) error {
		return w.WriteTraces(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	})
}

// fileMetricExporter is an sdkmetric.Exporter that writes each collection
// as one ExportMetricsServiceRequest line, with cumulative temporality.
type fileMetricExporter struct{ sink *fileSink }

var _ sdkmetric.Exporter = fileMetricExporter{}

func (fileMetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (fileMetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

// Export writes what converts, then reports what did not.
func (e fileMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	pb, convErr := resourceMetricsToProto(rm)
	err := e.sink.write(ctx, func(w *otlpjson.Writer) error {
		return w.WriteMetrics(&colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{pb}})
	})
	return errors.Join(err, convErr)
}

// ForceFlush has nothing to do: every export is flushed as it is written.
func (fileMetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

func (e fileMetricExporter) Shutdown(context.Context) error { return e.sink.close() }
