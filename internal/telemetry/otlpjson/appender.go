package otlpjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Appender appends records, one line each, to an OTLP/JSON lines file so
// that whatever interrupts a write — a full disk, a SIGKILL, a power loss —
// every record in the file is either whole or absent, and the file stays
// OTLP/JSON lines that any reader (the collector's otlpjsonfile receiver,
// jq, ortel replay) can read:
//
//   - each record is one write of the whole line, newline last, so the
//     only damage an interrupted write can leave is a cut last line
//     without its newline;
//   - a write that fails is undone: the file is truncated back to the end
//     of the last whole record, so the next record starts a line of its own
//     (and a failure of that truncation is retried before the next write);
//   - opening repairs what a crash left: a last line without its newline is
//     removed, or completed when it is a whole JSON object already;
//   - a write that fails for lack of space (ENOSPC, EDQUOT) is retried with
//     backoff for up to Retry, so a disk that is freed soon after loses
//     nothing; while the disk stays full each later record gets one try,
//     so none waits, and the first that fits ends the outage: the writer
//     never stops for good.
//
// Readers (Scanner, ReadTraces, ReadMetrics) detect whatever else a power
// loss may leave (a zero-filled or spliced line never parses as JSON) and
// skip it. An Appender is not safe for concurrent use, and a file must have
// one Appender at a time.
type Appender struct {
	// Retry bounds how long Append retries a write that failed for lack of
	// space (default 1s; 0 tries once).
	Retry time.Duration

	path string
	f    *os.File
	size int64 // the end of the last whole record: where the next one goes
	torn bool  // a failed write left bytes after size that are not removed yet
	// failing is set while writes fail for lack of space: a record then
	// gets one try, not the retry window, so a disk that stays full costs
	// each record one failed write, not a wait.
	failing bool
}

// Repair says what OpenAppender found at the end of the file and did.
type Repair struct {
	// Removed is the length of the cut last line it removed (0 for none).
	Removed int64
	// Completed is true when the last line was a whole record that only
	// lacked its newline, which was added.
	Completed bool
}

// String says what the repair did, in plain words; "" when nothing.
func (r Repair) String() string {
	switch {
	case r.Removed > 0:
		return fmt.Sprintf("removed an incomplete last record of %d bytes (cut by a crash or a full disk)", r.Removed)
	case r.Completed:
		return "added the missing line end after the last record"
	}
	return ""
}

// OpenAppender opens path for appending, creating it and its folder, and
// repairs its end (see Repair).
func OpenAppender(path string) (*Appender, Repair, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, Repair{}, fmt.Errorf("create the folder of %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, Repair{}, fmt.Errorf("open %s: %w", path, err)
	}
	a := &Appender{Retry: time.Second, path: path, f: f}
	rep, err := a.repair()
	if err != nil {
		f.Close()
		return nil, Repair{}, fmt.Errorf("repair the end of %s: %w", path, err)
	}
	return a, rep, nil
}

// repair removes or completes a last line without a newline.
func (a *Appender) repair() (Repair, error) {
	st, err := a.f.Stat()
	if err != nil {
		return Repair{}, err
	}
	size := st.Size()
	a.size = size
	if size == 0 {
		return Repair{}, nil
	}
	last := make([]byte, 1)
	if _, err := a.f.ReadAt(last, size-1); err != nil {
		return Repair{}, err
	}
	if last[0] == '\n' {
		return Repair{}, nil
	}
	start, err := lineStart(a.f, size)
	if err != nil {
		return Repair{}, err
	}
	if size-start <= MaxLineBytes {
		tail := make([]byte, size-start)
		if _, err := a.f.ReadAt(tail, start); err != nil {
			return Repair{}, err
		}
		if WholeRecord(tail) {
			if _, err := a.f.Write([]byte{'\n'}); err != nil {
				return Repair{}, err
			}
			a.size = size + 1
			return Repair{Completed: true}, nil
		}
	}
	if err := a.f.Truncate(start); err != nil {
		return Repair{}, err
	}
	a.size = start
	return Repair{Removed: size - start}, nil
}

// WholeRecord reports whether line (without its line end) is one whole
// JSON object: what a cut, zero-filled or spliced record never is, since a
// JSON object closes only at its last byte and NUL and other control bytes
// are invalid anywhere in JSON.
func WholeRecord(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) > 1 && t[0] == '{' && t[len(t)-1] == '}' && json.Valid(t)
}

// lineStart returns the offset just past the last '\n' before end (0 when
// there is none), reading backwards.
func lineStart(f *os.File, end int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		n := int64(len(buf))
		if pos < n {
			n = pos
		}
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
	}
	return 0, nil
}

// Path is the file's name.
func (a *Appender) Path() string { return a.path }

// File is the open file, for locking (ortel replay's lock) and Stat.
func (a *Appender) File() *os.File { return a.f }

// Size is the length of the file's whole records: where the next goes.
func (a *Appender) Size() int64 { return a.size }

// retryFirst and retryMax bound the backoff between tries of a write that
// failed for lack of space.
const (
	retryFirst = 10 * time.Millisecond
	retryMax   = 250 * time.Millisecond
)

// Append writes line — one record, ending with '\n' and holding no other
// — as the file's next line. On failure nothing of it stays in the file
// (see Appender) and the error names the file; a write that failed for
// lack of space is retried with backoff for up to a.Retry, or until ctx
// ends.
func (a *Appender) Append(ctx context.Context, line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' || bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return fmt.Errorf("write %s: a record must be one line ending with a line end", a.path)
	}
	var waited time.Duration
	for wait := retryFirst; ; wait = min(2*wait, retryMax) {
		err := a.tryAppend(line)
		if err == nil {
			a.failing = false
			return nil
		}
		if !NoSpace(err) || a.failing || waited+wait > a.Retry {
			a.failing = a.failing || NoSpace(err) && waited > 0
			return a.named(err)
		}
		if testRetryHook != nil {
			testRetryHook()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up: %w)", a.named(err), ctx.Err())
		case <-t.C:
		}
		waited += wait
	}
}

// Write is Append for io.Writer users that write one whole record (one
// line) per call, such as ortel import's span writer.
func (a *Appender) Write(line []byte) (int, error) {
	if err := a.Append(context.Background(), line); err != nil {
		return 0, err
	}
	return len(line), nil
}

// named returns err naming the file once: an *os.PathError does already.
func (a *Appender) named(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("write %s: %w", a.path, err)
}

// testRetryHook, when set (tests), is called before each wait of a retry.
var testRetryHook func()

// tryAppend writes line once and undoes a partial write.
func (a *Appender) tryAppend(line []byte) error {
	if a.torn {
		// An earlier failed write could not be undone: undo it before
		// anything follows it.
		if err := a.f.Truncate(a.size); err != nil {
			return fmt.Errorf("remove a failed write's bytes: %w", err)
		}
		a.torn = false
	}
	n, err := a.f.Write(line)
	if err == nil {
		a.size += int64(n)
		return nil
	}
	if n > 0 {
		if terr := a.f.Truncate(a.size); terr != nil {
			a.torn = true
		}
	}
	return err
}

// NoSpace reports whether err is a lack of space: a full file system or
// an exhausted disk quota, which freeing space cures.
func NoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// Truncate empties the file: for a spool whose every record was sent.
func (a *Appender) Truncate() error {
	if err := a.f.Truncate(0); err != nil {
		return fmt.Errorf("empty %s: %w", a.path, err)
	}
	a.size, a.torn = 0, false
	return nil
}

// Sync commits the file's records to stable storage.
func (a *Appender) Sync() error {
	if err := a.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", a.path, err)
	}
	return nil
}

// Close closes the file, removing first what a failed write left.
func (a *Appender) Close() error {
	var err error
	if a.torn {
		err = a.f.Truncate(a.size)
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("close %s: %w", a.path, err)
	}
	return nil
}
