//go:build linux

package procfs

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestFileReadsFreshContentEachTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loadavg")
	if err := os.WriteFile(path, []byte("0.10 0.20 0.30 1/100 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.Read()
	if err != nil || string(got) != "0.10 0.20 0.30 1/100 42\n" {
		t.Fatalf("first Read = %q, %v", got, err)
	}
	// Rewrite in place (same inode, like the kernel regenerating a file).
	if err := os.WriteFile(path, []byte("9.99\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = f.Read()
	if err != nil || string(got) != "9.99\n" {
		t.Fatalf("second Read = %q, %v; want the new content", got, err)
	}
	if f.Path() != path {
		t.Errorf("Path() = %q", f.Path())
	}
}

func TestFileGrowsForLargeFiles(t *testing.T) {
	for _, size := range []int{0, 1, initialSize - 1, initialSize, initialSize + 1, 5*initialSize + 7} {
		content := bytes.Repeat([]byte("x"), size)
		path := filepath.Join(t.TempDir(), "big")
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := OpenFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Read()
		f.Close()
		if err != nil || !bytes.Equal(got, content) {
			t.Errorf("size %d: Read returned %d bytes, %v", size, len(got), err)
		}
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(dir, "nope")
		_, err := OpenFile(path, nil)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("err = %v, want not-exist", err)
		}
		if !strings.Contains(err.Error(), path) || !strings.HasPrefix(err.Error(), "open ") {
			t.Errorf("message %q does not name the operation and path", err)
		}
	})
	t.Run("injected EACCES", func(t *testing.T) {
		deny := func(string) (int, error) { return -1, syscall.EACCES }
		_, err := OpenFile("/proc/1/io", deny)
		if !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("err = %v, want permission denied", err)
		}
		if !strings.Contains(err.Error(), `"/proc/1/io"`) {
			t.Errorf("message %q does not name the file", err)
		}
	})
	t.Run("read after close", func(t *testing.T) {
		path := filepath.Join(dir, "f")
		os.WriteFile(path, []byte("1"), 0o644)
		f, err := OpenFile(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
		if _, err := f.Read(); !errors.Is(err, syscall.EBADF) {
			t.Errorf("Read after Close = %v, want EBADF", err)
		}
	})
}

func TestFileRealProcStat(t *testing.T) {
	f, err := OpenFile("/proc/stat", nil)
	if err != nil {
		t.Fatalf("this test needs Linux /proc: %v", err)
	}
	defer f.Close()
	b, err := f.Read()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("cpu ")) || !bytes.Contains(b, []byte("\nctxt ")) {
		t.Fatalf("/proc/stat does not look like /proc/stat: %.80q", b)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := f.Read(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Read allocates %v times per call after warm-up, want 0", allocs)
	}
}

func BenchmarkFileRead(b *testing.B) {
	for _, path := range []string{"/proc/stat", "/proc/meminfo", "/proc/self/stat", "/proc/self/status"} {
		b.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(b *testing.B) {
			f, err := OpenFile(path, nil)
			if err != nil {
				b.Skip(err)
			}
			defer f.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.Read(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestReadOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "name")
	if err := os.WriteFile(path, []byte("package-0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadOnce(path, nil)
	if err != nil || string(b) != "package-0\n" {
		t.Fatalf("ReadOnce = %q, %v", b, err)
	}
	denied := func(string) (int, error) { return -1, syscall.EACCES }
	if _, err := ReadOnce(path, denied); !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), path) {
		t.Errorf("ReadOnce refused = %v, want a permission error naming the path", err)
	}
}
