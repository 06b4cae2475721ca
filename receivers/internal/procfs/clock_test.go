package procfs

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

func writeAuxv(t *testing.T, root string, pairs ...uint64) {
	t.Helper()
	word := int(unsafe.Sizeof(uintptr(0)))
	var b []byte
	for _, v := range pairs {
		w := make([]byte, word)
		if word == 8 {
			binary.NativeEndian.PutUint64(w, v)
		} else {
			binary.NativeEndian.PutUint32(w, uint32(v))
		}
		b = append(b, w...)
	}
	dir := filepath.Join(root, "proc", "self")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "auxv"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestClockTicks(t *testing.T) {
	tests := []struct {
		name  string
		pairs []uint64 // nil: no auxv file
		want  int64
	}{
		{"no auxv", nil, DefaultClockTicks},
		{"AT_CLKTCK 250", []uint64{6, 4096, 17, 250, 0, 0}, 250},
		{"no AT_CLKTCK", []uint64{6, 4096, 0, 0}, DefaultClockTicks},
		{"after terminator", []uint64{6, 4096, 0, 0, 17, 250}, DefaultClockTicks},
		{"zero", []uint64{17, 0, 0, 0}, DefaultClockTicks},
		{"truncated", []uint64{6}, DefaultClockTicks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.pairs != nil {
				writeAuxv(t, root, tt.pairs...)
			}
			if got := ClockTicks(root); got != tt.want {
				t.Errorf("ClockTicks = %d, want %d", got, tt.want)
			}
		})
	}
	if runtime.GOOS == "linux" {
		if got := ClockTicks("/"); got != 100 {
			t.Errorf("ClockTicks(/) = %d; USER_HZ is 100 on every Linux this runs on", got)
		}
	}
}

func TestSelfPID(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc", "4242"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("4242", filepath.Join(root, "proc", "self")); err != nil {
		t.Fatal(err)
	}
	if got := SelfPID(root); got != 4242 {
		t.Errorf("SelfPID(fixture) = %d, want 4242", got)
	}
	if got := SelfPID(t.TempDir()); got != os.Getpid() {
		t.Errorf("SelfPID(no proc) = %d, want os.Getpid() %d", got, os.Getpid())
	}
	if runtime.GOOS == "linux" {
		if got := SelfPID("/"); got != os.Getpid() {
			t.Errorf("SelfPID(/) = %d, want %d", got, os.Getpid())
		}
	}
}
