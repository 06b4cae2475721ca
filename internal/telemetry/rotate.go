package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/otlpjson"
)

// Rotation bounds the embedded default's files for long-running commands
// (the agent), like the collector's file exporter: when a file reaches
// MaxBytes it is renamed with the time (traces-20261128T050900.123456789.jsonl,
// so an `ortel replay` progress file stays valid) and a new one is
// started; only the Backups newest renamed files are kept.
type Rotation struct {
	// MaxBytes is the size at which a file is rotated; 0 never rotates. A
	// file passes it by at most one export (one line).
	MaxBytes int64
	// Backups is how many rotated files of each signal are kept (at least
	// 1 when rotating).
	Backups int
}

// rotatedTimeFormat names rotated files; fixed width, so names sort in
// time order.
const rotatedTimeFormat = "20060102T150405.000000000"

// countingWriter counts what reaches the file.
type countingWriter struct {
	f *os.File
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

// openRotatingSink opens path for appending, rotating it by rot.
func openRotatingSink(path string, rot Rotation) (*fileSink, error) {
	s, err := openSink(path)
	if err != nil || rot.MaxBytes <= 0 {
		return s, err
	}
	st, err := s.f.Stat()
	if err != nil {
		_ = s.close()
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	s.rot = rot
	s.cw = &countingWriter{f: s.f, n: st.Size()}
	s.w = otlpjson.NewWriter(s.cw)
	return s, nil
}

// rotateIfFull renames a full file and opens a new one; s.mu is held.
func (s *fileSink) rotateIfFull() error {
	if s.cw == nil || s.cw.n < s.rot.MaxBytes {
		return nil
	}
	if err := s.w.Close(); err != nil {
		return err
	}
	if err := s.f.Close(); err != nil {
		return err
	}
	ext := filepath.Ext(s.path)
	base := strings.TrimSuffix(s.path, ext)
	// Fixed-width time stamps sort in time order, which pruning relies on.
	at := time.Now().UTC()
	rotated := base + "-" + at.Format(rotatedTimeFormat) + ext
	for fileExists(rotated) { // two rotations in one nanosecond's name
		at = at.Add(time.Nanosecond)
		rotated = base + "-" + at.Format(rotatedTimeFormat) + ext
	}
	if err := os.Rename(s.path, rotated); err != nil {
		return fmt.Errorf("rotate %s: %w", s.path, err)
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		s.closed = true
		return fmt.Errorf("rotate %s: %w", s.path, err)
	}
	s.f = f
	s.cw = &countingWriter{f: f}
	s.w = otlpjson.NewWriter(s.cw)
	return pruneBackups(base, ext, max(1, s.rot.Backups))
}

// pruneBackups removes the oldest rotated files of base beyond keep, and
// their replay progress files.
func pruneBackups(base, ext string, keep int) error {
	matches, err := filepath.Glob(globEscape(base) + "-*" + ext)
	if err != nil {
		return err
	}
	slices.Sort(matches) // the time stamps sort in time order
	var errs []string
	for _, old := range matches[:max(0, len(matches)-keep)] {
		if err := os.Remove(old); err != nil {
			errs = append(errs, err.Error())
		}
		_ = os.Remove(old + ProgressSuffix)
	}
	if len(errs) > 0 {
		return fmt.Errorf("remove old rotated files: %s", strings.Join(errs, "; "))
	}
	return nil
}

func globEscape(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
