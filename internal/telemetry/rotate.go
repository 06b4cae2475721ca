package telemetry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// Rotation bounds the embedded default's files for long-running commands
// (the agent), like the collector's file exporter: when a file reaches
// MaxBytes it is renamed with the time (traces-20261128T050900.123456789.jsonl,
// its `ortel replay` progress file with it) and a new one is started; only
// the Backups newest renamed files are kept.
type Rotation struct {
	// MaxBytes is the size at which a file is rotated; 0 never rotates. A
	// file passes it by one export (one line), or by what is written while
	// `ortel replay` sends it.
	MaxBytes int64
	// Backups is how many rotated files of each signal are kept (at least
	// 1 when rotating).
	Backups int
}

// rotatedTimeFormat names rotated files; fixed width, so names sort in
// time order.
const rotatedTimeFormat = "20060102T150405.000000000"

// openRotatingSink opens path for appending, rotating it by rot.
func openRotatingSink(path string, rot Rotation) (*fileSink, error) {
	s, err := openSink(path)
	if err != nil {
		return nil, err
	}
	s.rot = rot
	return s, nil
}

// rotateIfFull renames a full file, with its replay progress, and opens a
// new one; s.mu is held. While `ortel replay` sends the file (it holds the
// file's replay lock) the rotation waits for a later write: renaming the
// progress file under a running replay would lose the progress it records
// after.
func (s *fileSink) rotateIfFull() error {
	if s.rot.MaxBytes <= 0 || s.app.Size() < s.rot.MaxBytes {
		return nil
	}
	locked, err := tryLockReplay(s.app.File())
	if err != nil || !locked {
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
		unlockReplay(s.app.File())
		return fmt.Errorf("rotate %s: %w", s.path, err)
	}
	// The progress follows its file (it names the file's identity, so a
	// progress file left behind would only be ignored, and the rotated
	// file sent again).
	perr := os.Rename(s.path+ProgressSuffix, rotated+ProgressSuffix)
	if errors.Is(perr, os.ErrNotExist) {
		perr = nil
	}
	cerr := s.app.Close() // and the lock with it
	app, _, err := otlpjson.OpenAppender(s.path)
	if err != nil {
		s.closed = true
		return fmt.Errorf("rotate %s: %w", s.path, err)
	}
	s.app = app
	if err := errors.Join(perr, cerr); err != nil {
		return fmt.Errorf("rotate %s: %w", s.path, err)
	}
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
		if err := removeUnlessReplaying(old); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("remove old rotated files: %s", strings.Join(errs, "; "))
	}
	return nil
}

// removeUnlessReplaying removes a rotated file and its replay progress,
// unless `ortel replay` is sending it now: then it stays until a later
// rotation prunes it.
func removeUnlessReplaying(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if locked, err := tryLockReplay(f); err != nil || !locked {
		return err
	}
	err = os.Remove(path)
	_ = os.Remove(path + ProgressSuffix)
	return err
}

func globEscape(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
