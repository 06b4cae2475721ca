package rapl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// expand writes the fixture testdata/<name>.txtar into a fresh temporary
// folder and returns that folder, to be used as the receiver's root.
//
// Fixtures are text archives, not folder trees, because sysfs names such
// as intel-rapl:0 hold a colon, which Go module archives refuse. The
// format is txtar's: a comment, then files, each introduced by a line
// "-- path --".
func expand(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".txtar"))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var path string
	var content bytes.Buffer
	flush := func() {
		if path == "" {
			return
		}
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if l := strings.TrimSuffix(line, "\n"); strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			flush()
			path = strings.TrimSpace(l[3 : len(l)-3])
			content.Reset()
			continue
		}
		if path != "" {
			content.WriteString(line)
		}
	}
	flush()
	return root
}

// write replaces the content of a file under root.
func write(t testing.TB, root, path, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(path)), []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
