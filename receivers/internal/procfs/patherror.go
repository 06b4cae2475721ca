package procfs

import "fmt"

// OpenFunc opens path read-only and returns its file descriptor. Receivers
// take one so that tests can inject failures such as EACCES (tests run as
// root, where file modes alone never refuse a read).
type OpenFunc func(path string) (int, error)

// PathError is an error reading path. Its message is in plain words, for
// example `read "/proc/1234/io": permission denied`.
type PathError struct {
	Op   string // open, read, close
	Path string
	Err  error
}

func (e *PathError) Error() string { return fmt.Sprintf("%s %q: %v", e.Op, e.Path, e.Err) }

// Unwrap returns the underlying error, so errors.Is(err, fs.ErrNotExist)
// and errors.Is(err, syscall.ESRCH) work.
func (e *PathError) Unwrap() error { return e.Err }

// Truncate shortens what a file holds to 80 bytes, for an error message
// that quotes it.
func Truncate(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
