//go:build linux

package procfs

import (
	"encoding/binary"
	"syscall"
)

// Dir is a directory kept open whose entries are counted on demand, such
// as /proc/PID/fd. It is not safe for concurrent use.
type Dir struct {
	path string
	fd   int
	buf  []byte
}

// OpenDir opens the directory path with open (Open when nil) and keeps it
// open until Close.
func OpenDir(path string, open OpenFunc) (*Dir, error) {
	if open == nil {
		open = openDir
	}
	fd, err := open(path)
	if err != nil {
		return nil, &PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{path: path, fd: fd}, nil
}

func openDir(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		return fd, err
	}
}

// Path returns the path the directory was opened with.
func (d *Dir) Path() string { return d.path }

// Count returns the number of entries in the directory, not counting "."
// and "..". It rewinds the directory and reads it with getdents(2), so it
// does not allocate once its buffer exists.
func (d *Dir) Count() (int, error) {
	if d.fd < 0 {
		return 0, &PathError{Op: "read", Path: d.path, Err: syscall.EBADF}
	}
	if d.buf == nil {
		d.buf = make([]byte, 8192)
	}
	if _, err := syscall.Seek(d.fd, 0, 0); err != nil {
		return 0, &PathError{Op: "read", Path: d.path, Err: err}
	}
	count := 0
	for {
		n, err := syscall.Getdents(d.fd, d.buf)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &PathError{Op: "read", Path: d.path, Err: err}
		}
		if n <= 0 {
			return count, nil
		}
		count += countDirents(d.buf[:n])
	}
}

// countDirents counts the linux_dirent64 records in b that are not "." or
// "..". A record is: ino uint64, off int64, reclen uint16, type uint8, then
// the NUL-terminated name.
func countDirents(b []byte) int {
	const nameOff = 19
	count := 0
	for len(b) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			break
		}
		name := b[nameOff:reclen]
		if !(len(name) > 0 && name[0] == '.' && (len(name) == 1 || name[1] == 0 || (name[1] == '.' && (len(name) == 2 || name[2] == 0)))) {
			count++
		}
		b = b[reclen:]
	}
	return count
}

// Close closes the directory. Closing twice is harmless.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := syscall.Close(d.fd)
	d.fd = -1
	if err != nil {
		return &PathError{Op: "close", Path: d.path, Err: err}
	}
	return nil
}
