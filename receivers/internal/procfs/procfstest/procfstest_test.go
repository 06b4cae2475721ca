//go:build linux

package procfstest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestCopyTreeAndRewrite(t *testing.T) {
	src := t.TempDir()
	WriteFile(t, src, "proc/42/stat", "42 (x) S\n")
	if err := os.Symlink("42", filepath.Join(src, "proc", "self")); err != nil {
		t.Fatal(err)
	}
	dst := CopyTree(t, src)
	if b, err := os.ReadFile(filepath.Join(dst, "proc", "self", "stat")); err != nil || string(b) != "42 (x) S\n" {
		t.Fatalf("copied tree: %q, %v", b, err)
	}
	if link, err := os.Readlink(filepath.Join(dst, "proc", "self")); err != nil || link != "42" {
		t.Errorf("symlink not kept: %q, %v", link, err)
	}

	// Rewrite keeps the inode, so an open file sees the new content.
	path := filepath.Join(dst, "proc", "42", "stat")
	before, _ := os.Stat(path)
	later := t.TempDir()
	WriteFile(t, later, "proc/42/stat", "42 (x) R\n")
	Rewrite(t, dst, "proc/42/stat", later)
	after, _ := os.Stat(path)
	if before.Sys().(*syscall.Stat_t).Ino != after.Sys().(*syscall.Stat_t).Ino {
		t.Error("Rewrite replaced the file instead of rewriting it")
	}
	if b, _ := os.ReadFile(path); string(b) != "42 (x) R\n" {
		t.Errorf("content = %q", b)
	}
}

func TestCollect(t *testing.T) {
	_, reader := NewProvider(t)
	got, err := Collect(t, reader)
	if err != nil || len(got) != 0 {
		t.Errorf("empty provider: %v, %v", got, err)
	}
}

func TestExpand(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "zones.txtar")
	WriteFile(t, filepath.Dir(archive), filepath.Base(archive), `A comment, not a file.
-- sys/class/powercap/intel-rapl:0/name --
package-0
-- sys/class/powercap/intel-rapl:0/energy_uj --
1000
2000
-- empty --
`)
	root := Expand(t, archive)
	for name, want := range map[string]string{
		"sys/class/powercap/intel-rapl:0/name":      "package-0\n",
		"sys/class/powercap/intel-rapl:0/energy_uj": "1000\n2000\n",
		"empty": "",
	} {
		if b, err := os.ReadFile(filepath.Join(root, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 2 {
		t.Errorf("root holds %d entries, want sys and empty (the comment is no file)", len(entries))
	}
}
