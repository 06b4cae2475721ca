package otlpjson

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
)

// ReadTraces reads OTLP JSON lines from r and calls fn with each line's
// request, in order. Blank lines are skipped. It stops at the first line
// that does not decode, or the first error fn returns, and returns that
// error prefixed with the line number ("line 3: ...").
func ReadTraces(r io.Reader, fn func(*coltracepb.ExportTraceServiceRequest) error) error {
	return readLines(r, func(line []byte) error {
		req := new(coltracepb.ExportTraceServiceRequest)
		if err := Unmarshal(line, req); err != nil {
			return err
		}
		return fn(req)
	})
}

// ReadMetrics reads OTLP JSON lines from r and calls fn with each line's
// request, in order; it behaves as ReadTraces does.
func ReadMetrics(r io.Reader, fn func(*colmetricspb.ExportMetricsServiceRequest) error) error {
	return readLines(r, func(line []byte) error {
		req := new(colmetricspb.ExportMetricsServiceRequest)
		if err := Unmarshal(line, req); err != nil {
			return err
		}
		return fn(req)
	})
}

var utf8BOM = []byte("\xef\xbb\xbf")

// readLines calls fn with each non-blank line of r, of any length, without
// its line ending (\n or \r\n).
func readLines(r io.Reader, fn func([]byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, assembled
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("line %d: read: %w", n, err)
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(bytes.TrimRight(line, "\r\n")); ferr != nil {
				return fmt.Errorf("line %d: %w", n, ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}
