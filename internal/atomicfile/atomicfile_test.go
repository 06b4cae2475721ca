package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

func TestWriteReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	for _, content := range []string{"first\n", "second, longer\n"} {
		if err := Write(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("the folder holds %d entries, want the file alone (no temporary file left)", len(ents))
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}

// TestWriteOnAFullDisk: a write that does not fit fails naming the file,
// leaves the old content whole, and no empty or partial file, nor a
// temporary one.
func TestWriteOnAFullDisk(t *testing.T) {
	dir := testenv.Tmpfs(t, 64<<10)
	path := filepath.Join(dir, "report.json")
	old := []byte("{\"old\": true}\n")
	if err := Write(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Fill(t, dir)
	err := Write(path, bytes.Repeat([]byte("x"), 32<<10), 0o644)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("write on a full disk: %v, want an error naming the file", err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Errorf("the old file became %d bytes, want it as it was", len(got))
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
	missing := filepath.Join(dir, "new.json")
	if err := Write(missing, bytes.Repeat([]byte("x"), 32<<10), 0o644); err == nil {
		t.Fatal("a new file was written on a full disk")
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a failed write left %s (a 0-byte report is what this prevents): %v", missing, err)
	}
}
