package otlpjson

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// ErrClosed is returned by a Writer's methods after Close.
var ErrClosed = errors.New("otlpjson: writer is closed")

// Writer writes OTLP export requests as OTLP JSON lines. It is safe for
// concurrent use: every request becomes exactly one whole line, never
// interleaved with another. Output is buffered; call Flush to push it to
// the underlying writer, and Close when done.
//
// After a write to the underlying writer fails, every later call returns
// that error.
type Writer struct {
	mu     sync.Mutex
	bw     *bufio.Writer
	buf    bytes.Buffer // line being encoded, reused
	err    error        // sticky write error
	closed bool
}

// NewWriter returns a Writer that writes lines to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{bw: bufio.NewWriterSize(w, 64<<10)}
}

// WriteTraces writes req as one line.
func (w *Writer) WriteTraces(req *coltracepb.ExportTraceServiceRequest) error {
	return w.write(req)
}

// WriteMetrics writes req as one line.
func (w *Writer) WriteMetrics(req *colmetricspb.ExportMetricsServiceRequest) error {
	return w.write(req)
}

func (w *Writer) write(m proto.Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	if err := AppendLine(&w.buf, m); err != nil {
		return err // nothing written: the writer stays usable
	}
	if _, err := w.bw.Write(w.buf.Bytes()); err != nil {
		w.err = err
		return err
	}
	if w.buf.Cap() > 1<<20 { // do not keep one huge request's buffer forever
		w.buf = bytes.Buffer{}
	}
	return nil
}

// Flush writes any buffered lines to the underlying writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.flush()
}

func (w *Writer) flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Close flushes buffered lines; later writes return ErrClosed. Like
// compress/gzip's Writer, it does not close the underlying writer. Calling
// Close again returns nil.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.flush()
}
