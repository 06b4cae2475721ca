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

// MaxLineBytes is the longest line the readers take: a longer one is a
// damaged record (skipped without holding it in memory). ortel's own
// records stay far below it: a collector accepts 4 MiB per request by
// default.
const MaxLineBytes = 64 << 20

// ReadTraces reads OTLP JSON lines from r and calls fn with each line's
// request, in order. Blank lines are skipped. A line that does not decode
// (a damaged record, such as one a crash cut short) is skipped and counted:
// the records after it are still read. It stops at the first error fn
// returns, or a read error, and returns it prefixed with the line number
// ("line 3: ..."); otherwise, when lines were skipped, it returns a
// *DamagedError saying how many and where the first was, after every good
// record was passed to fn.
func ReadTraces(r io.Reader, fn func(*coltracepb.ExportTraceServiceRequest) error) error {
	return readRecords(r, func(line []byte) error {
		req := new(coltracepb.ExportTraceServiceRequest)
		if err := Unmarshal(line, req); err != nil {
			return &decodeError{err}
		}
		return fn(req)
	})
}

// ReadMetrics reads OTLP JSON lines from r and calls fn with each line's
// request, in order; it behaves as ReadTraces does.
func ReadMetrics(r io.Reader, fn func(*colmetricspb.ExportMetricsServiceRequest) error) error {
	return readRecords(r, func(line []byte) error {
		req := new(colmetricspb.ExportMetricsServiceRequest)
		if err := Unmarshal(line, req); err != nil {
			return &decodeError{err}
		}
		return fn(req)
	})
}

// decodeError marks a line that does not decode, as opposed to an error
// of the callback.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// DamagedError says that a reader skipped damaged records: lines that are
// not an OTLP/JSON request of the signal read (cut short by a crash or a
// full disk, zero-filled by a power loss, or simply not OTLP). Every good
// record around them was read.
type DamagedError struct {
	// Count is how many lines were skipped.
	Count int
	// Line and Offset locate the first (line number from 1, byte offset
	// of its start); Err is why it was skipped.
	Line   int
	Offset int64
	Err    error
}

func (e *DamagedError) Error() string {
	s := fmt.Sprintf("line %d: %v (a damaged record at byte %d, skipped", e.Line, e.Err, e.Offset)
	if e.Count > 1 {
		s += fmt.Sprintf("; %d more damaged lines skipped", e.Count-1)
	}
	return s + ")"
}

func (e *DamagedError) Unwrap() error { return e.Err }

// readRecords calls fn with each non-blank line of r. An error of fn that
// is a *decodeError skips the line and is counted; any other stops.
func readRecords(r io.Reader, fn func([]byte) error) error {
	var damaged *DamagedError
	s := NewScanner(r)
	for s.Scan() {
		err := fn(s.Line())
		var de *decodeError
		switch {
		case err == nil:
		case errors.As(err, &de):
			if damaged == nil {
				damaged = &DamagedError{Line: s.LineNumber(), Offset: s.Start(), Err: de.err}
			}
			damaged.Count++
		default:
			return fmt.Errorf("line %d: %w", s.LineNumber(), err)
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	if damaged != nil {
		return damaged
	}
	return nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// Scanner reads the lines of an OTLP/JSON lines file, of any length up to
// MaxLineBytes, with their byte offsets: what a reader that records its
// progress (ortel replay) needs. Blank lines are skipped; a line longer
// than MaxLineBytes is returned as a line that does not decode.
type Scanner struct {
	br    *bufio.Reader
	off   int64 // bytes consumed
	long  []byte
	line  []byte
	start int64
	n     int // line number of line
	ended bool
	err   error
	done  bool
}

// NewScanner returns a Scanner reading r from its current position, which
// it takes to be byte 0 of line 1 (see SetPosition for a reader that
// resumes).
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{br: bufio.NewReaderSize(r, 64<<10)}
}

// SetPosition says that r is positioned at byte offset off, at the start
// of line number line-1's successor: a reader resuming a file after
// Seek(off) calls it before the first Scan so offsets and line numbers
// stay those of the file.
func (s *Scanner) SetPosition(off int64, line int) {
	s.off, s.n = off, line-1
}

// tooLong replaces a line longer than MaxLineBytes: it never decodes.
var tooLong = []byte("\x00 line longer than the OTLP/JSON reader's limit")

// Scan advances to the next non-blank line; false at the end of the input
// or on a read error (see Err).
func (s *Scanner) Scan() bool {
	for !s.done {
		start := s.off
		line, err := s.br.ReadSlice('\n')
		s.off += int64(len(line))
		if errors.Is(err, bufio.ErrBufferFull) {
			s.long = append(s.long[:0], line...)
			over := false
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = s.br.ReadSlice('\n')
				s.off += int64(len(line))
				if !over && len(s.long)+len(line) > MaxLineBytes {
					over, s.long = true, append(s.long[:0], tooLong...)
				}
				if !over {
					s.long = append(s.long, line...)
				}
			}
			if over && bytes.HasSuffix(line, []byte("\n")) {
				s.long = append(s.long, '\n')
			}
			line = s.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			s.err, s.done = fmt.Errorf("line %d: read: %w", s.n+1, err), true
			return false
		}
		if errors.Is(err, io.EOF) {
			s.done = true
		}
		s.n++
		if start == 0 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		s.ended = bytes.HasSuffix(line, []byte("\n"))
		s.line, s.start = bytes.TrimRight(line, "\r\n"), start
		return true
	}
	return false
}

// Line is the current line without its line end. It is valid until the
// next Scan.
func (s *Scanner) Line() []byte { return s.line }

// LineNumber is the current line's number, from 1.
func (s *Scanner) LineNumber() int { return s.n }

// Start is the byte offset where the current line starts; End is the
// offset just past its line end (the next line's start).
func (s *Scanner) Start() int64 { return s.start }

// End is the offset just past the current line and its line end.
func (s *Scanner) End() int64 { return s.off }

// Terminated reports whether the current line ends with a line end. Only
// the last line of a file can lack one: a record still being written by
// another process, cut short by a crash or a full disk, or a hand-written
// file without a final newline.
func (s *Scanner) Terminated() bool { return s.ended }

// Err is the read error that ended Scan, or nil at the end of the input.
func (s *Scanner) Err() error { return s.err }
