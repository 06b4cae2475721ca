// Package atomicfile replaces files whole: a reader, a crash or a power
// loss sees the old content or the new one, never a part, and a write that
// fails (a full disk) leaves the old file as it was and no empty one.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes data to path through a temporary file in the same folder:
// written, synced to stable storage, then renamed over path. On failure
// the temporary file is removed and path is untouched.
func Write(path string, data []byte, perm os.FileMode) error {
	return WriteFrom(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFrom is Write for content that fill streams into w (a download,
// checked as it is written): when fill returns an error, nothing is
// renamed and the temporary file is removed, so path keeps what it held.
func WriteFrom(path string, perm os.FileMode, fill func(w io.Writer) error) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	werr := fill(tmp)
	if werr == nil {
		werr = tmp.Sync()
	}
	if werr == nil {
		werr = tmp.Chmod(perm)
	}
	if err := errors.Join(werr, tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
