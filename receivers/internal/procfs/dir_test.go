//go:build linux

package procfs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestDirCount(t *testing.T) {
	dir := t.TempDir()
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n, err := d.Count(); err != nil || n != 5 {
		t.Fatalf("Count = %d, %v; want 5", n, err)
	}
	// A second Count re-reads the directory: it sees new entries.
	for _, name := range []string{"5", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := d.Count(); err != nil || n != 7 {
		t.Fatalf("Count after adding two = %d, %v; want 7", n, err)
	}
}

func TestDirCountManyEntries(t *testing.T) {
	// More entries than one getdents buffer holds.
	dir := t.TempDir()
	const want = 600
	for i := range want {
		name := fmt.Sprintf("entry-with-a-rather-long-name-%04d", i)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if n, err := d.Count(); err != nil || n != want {
		t.Fatalf("Count = %d, %v; want %d", n, err, want)
	}
}

func TestDirCountRealFDs(t *testing.T) {
	d, err := OpenDir("/proc/self/fd", nil)
	if err != nil {
		t.Fatalf("this test needs Linux /proc: %v", err)
	}
	defer d.Close()
	before, err := d.Count()
	if err != nil {
		t.Fatal(err)
	}
	var files []*os.File
	for range 3 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	after, err := d.Count()
	for _, f := range files {
		f.Close()
	}
	if err != nil || after != before+3 {
		t.Fatalf("after opening 3 files Count = %d, %v; want %d", after, err, before+3)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if _, err := d.Count(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Count allocates %v times per call after warm-up, want 0", allocs)
	}
}

func TestDirErrors(t *testing.T) {
	if _, err := OpenDir(filepath.Join(t.TempDir(), "gone"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: err = %v, want not-exist", err)
	}
	d, err := OpenDir(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if err := d.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := d.Count(); err == nil {
		t.Error("Count after Close succeeded")
	}
}

func TestCountDirents(t *testing.T) {
	rec := func(name string) []byte {
		reclen := (19 + len(name) + 1 + 7) &^ 7
		b := make([]byte, reclen)
		binary.NativeEndian.PutUint16(b[16:], uint16(reclen))
		copy(b[19:], name)
		return b
	}
	var buf []byte
	for _, n := range []string{".", "..", "0", "1", "...", ".x", "10"} {
		buf = append(buf, rec(n)...)
	}
	if got := countDirents(buf); got != 5 {
		t.Errorf("countDirents = %d, want 5 (all but . and ..)", got)
	}
	// A corrupt record length stops the walk instead of looping or panicking.
	bad := rec("0")
	binary.NativeEndian.PutUint16(bad[16:], 3)
	if got := countDirents(bad); got != 0 {
		t.Errorf("corrupt record: countDirents = %d, want 0", got)
	}
}
