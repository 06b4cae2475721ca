package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// This file is the embedded default: with no collector configured, traces
// and metrics go to OTLP/JSON lines files (package otlpjson), the format the
// collector's file exporter writes, so a run can be replayed later into any
// collector with its otlpjsonfile receiver.

// fileSink is one append-only OTLP/JSON lines file, crash-consistent (see
// otlpjson.Appender): every export is one line, written whole or not at
// all, so a crash or a full disk leaves no partial record and loses
// nothing already written. A write that fails for lack of space is retried
// for a moment, and every later export is tried afresh: the sink recovers
// as soon as space returns.
type fileSink struct {
	path string

	mu     sync.Mutex
	app    *otlpjson.Appender // nil for the console sink
	w      *otlpjson.Writer   // the console sink's writer
	buf    bytes.Buffer       // the record being written, reused
	closed bool
	// repaired says what opening found at the end of the file: a record a
	// crash cut short, removed ("" for nothing).
	repaired string

	rot Rotation
}

// consoleSink writes OTLP/JSON lines to w, shared by both signals'
// console exporters so their lines never interleave. Closing it only
// flushes: w is not ours to close.
func consoleSink(w io.Writer) *fileSink {
	return &fileSink{path: "standard output", w: otlpjson.NewWriter(w)}
}

// openSink opens path for appending, creating it and its folder, and
// repairs a last record that a crash cut short.
func openSink(path string) (*fileSink, error) {
	app, rep, err := otlpjson.OpenAppender(path)
	if err != nil {
		return nil, fmt.Errorf("telemetry: open the output file: %w", err)
	}
	s := &fileSink{path: path, app: app}
	if r := rep.String(); r != "" {
		s.repaired = path + ": " + r
	}
	return s, nil
}

var errSinkClosed = errors.New("telemetry output file is closed")

// write writes m as one line. On failure the file is as it was.
func (s *fileSink) write(ctx context.Context, m proto.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("write %s: %w", s.path, errSinkClosed)
	}
	if s.app == nil {
		var err error
		switch m := m.(type) {
		case *coltracepb.ExportTraceServiceRequest:
			err = s.w.WriteTraces(m)
		case *colmetricspb.ExportMetricsServiceRequest:
			err = s.w.WriteMetrics(m)
		default:
			err = fmt.Errorf("not an OTLP export request: %T", m)
		}
		if err == nil {
			err = s.w.Flush()
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", s.path, err)
		}
		return nil
	}
	s.buf.Reset()
	if err := otlpjson.AppendLine(&s.buf, m); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	err := s.appendLocked(ctx, s.buf.Bytes())
	if s.buf.Cap() > 1<<20 { // do not keep one huge request's buffer forever
		s.buf = bytes.Buffer{}
	}
	return err
}

// writeLine writes one record already encoded (otlpjson.AppendLine).
func (s *fileSink) writeLine(ctx context.Context, line []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.app == nil {
		return fmt.Errorf("write %s: %w", s.path, errSinkClosed)
	}
	return s.appendLocked(ctx, line)
}

// appendLocked appends line and rotates a full file; s.mu is held.
func (s *fileSink) appendLocked(ctx context.Context, line []byte) error {
	if err := s.app.Append(ctx, line); err != nil {
		return err
	}
	if err := s.rotateIfFull(); err != nil {
		return fmt.Errorf("telemetry: %w (the export was written)", err)
	}
	return nil
}

// emptyIfReplayed empties the file when `ortel replay` sent every record
// of it (its progress file says so, for this very file) and no replay runs
// now, and returns the bytes freed.
func (s *fileSink) emptyIfReplayed() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.app == nil || s.app.Size() == 0 {
		return 0, nil
	}
	f := s.app.File()
	if !replayedWhole(f, s.path, s.app.Size()) {
		return 0, nil
	}
	locked, err := tryLockReplay(f)
	if err != nil || !locked {
		return 0, err
	}
	defer unlockReplay(f)
	size := s.app.Size()
	if !replayedWhole(f, s.path, size) { // a replay may have ended just now
		return 0, nil
	}
	if err := s.app.Truncate(); err != nil {
		return 0, err
	}
	_ = os.Remove(s.path + ProgressSuffix)
	return size, nil
}

// close flushes and closes the file; later calls return nil.
func (s *fileSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.app == nil {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", s.path, err)
		}
		return nil
	}
	s.closed = true
	return s.app.Close()
}

// fileTraceClient is an otlptrace.Client that writes each upload as one
// ExportTraceServiceRequest line. otlptrace.New turns it into a span
// exporter, so spans are converted to OTLP by the SDK's own code.
type fileTraceClient struct{ sink *fileSink }

func (c fileTraceClient) Start(context.Context) error { return nil }

func (c fileTraceClient) Stop(context.Context) error { return c.sink.close() }

func (c fileTraceClient) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	return c.sink.write(ctx, &coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
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
	err := e.sink.write(ctx, &colmetricspb.ExportMetricsServiceRequest{ResourceMetrics: []*metricspb.ResourceMetrics{pb}})
	return errors.Join(err, convErr)
}

// ForceFlush has nothing to do: every export is flushed as it is written.
func (fileMetricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

func (e fileMetricExporter) Shutdown(context.Context) error { return e.sink.close() }
