//go:build linux

package procfs

import (
	"errors"
	"slices"
	"syscall"
)

// Open is the default OpenFunc: open(2) with O_RDONLY|O_CLOEXEC.
func Open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		return fd, err
	}
}

// initialSize is the first buffer size of a File: most /proc files fit.
const initialSize = 4096

// maxSize bounds how far a File's buffer grows (a /proc/stat on a machine
// with thousands of CPUs and interrupts stays well below it).
const maxSize = 64 << 20

// ErrTooLarge is returned by Read for a file larger than 64 MiB.
var ErrTooLarge = errors.New("file is larger than 64 MiB")

// File is a file kept open and re-read from offset zero on every Read.
// It is not safe for concurrent use.
type File struct {
	path string
	fd   int
	buf  []byte
}

// OpenFile opens path with open (Open when nil) and keeps it open until
// Close.
func OpenFile(path string, open OpenFunc) (*File, error) {
	if open == nil {
		open = Open
	}
	fd, err := open(path)
	if err != nil {
		return nil, &PathError{Op: "open", Path: path, Err: err}
	}
	return &File{path: path, fd: fd}, nil
}

// Path returns the path the file was opened with.
func (f *File) Path() string { return f.path }

// Read reads the whole file from offset zero and returns its content. The
// returned slice is valid until the next Read: the buffer is reused.
func (f *File) Read() ([]byte, error) {
	if f.fd < 0 {
		return nil, &PathError{Op: "read", Path: f.path, Err: syscall.EBADF}
	}
	if f.buf == nil {
		f.buf = make([]byte, initialSize)
	}
	for {
		n, err := pread(f.fd, f.buf)
		if err != nil {
			return nil, &PathError{Op: "read", Path: f.path, Err: err}
		}
		// A short read is the whole file: /proc and /sys files are
		// generated in one go and regular files return everything that
		// fits. A full buffer may mean more is left: grow and read again
		// from the start so the content stays one consistent snapshot.
		if n < len(f.buf) {
			return f.buf[:n], nil
		}
		if len(f.buf) >= maxSize {
			return nil, &PathError{Op: "read", Path: f.path, Err: ErrTooLarge}
		}
		f.buf = make([]byte, 2*len(f.buf))
	}
}

func pread(fd int, b []byte) (int, error) {
	for {
		n, err := syscall.Pread(fd, b, 0)
		if err == syscall.EINTR {
			continue
		}
		return n, err
	}
}

// Close closes the file. Closing twice is harmless.
func (f *File) Close() error {
	if f == nil || f.fd < 0 {
		return nil
	}
	err := syscall.Close(f.fd)
	f.fd = -1
	if err != nil {
		return &PathError{Op: "close", Path: f.path, Err: err}
	}
	return nil
}

// ReadOnce opens path with open (Open when nil), reads it whole and closes
// it: for small files read once, at construction. The content returned is
// the caller's own.
func ReadOnce(path string, open OpenFunc) ([]byte, error) {
	f, err := OpenFile(path, open)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := f.Read()
	return slices.Clone(b), err
}
