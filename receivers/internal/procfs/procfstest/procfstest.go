// Package procfstest holds the receivers' test helpers: fixture trees
// (copied somewhere writable, expanded from a text archive, rewritten in
// place between collections), collecting through an SDK ManualReader and
// comparing what was collected, and the checks every receiver's lifecycle
// must pass (a cancelled collection, Shutdown during collections, Shutdown
// twice, concurrent use) and its benchmarks. Only tests import it: it uses
// the OpenTelemetry SDK, which receivers never do.
package procfstest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CopyTree copies the fixture tree src (files, folders and symbolic links)
// into a new temporary folder and returns that folder.
func CopyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
	if err != nil {
		t.Fatalf("copy fixture %s: %v", src, err)
	}
	return dst
}

// Rewrite replaces the content of root/rel in place (same inode, as the
// kernel regenerates a /proc file), so a receiver holding it open sees the
// new content on its next read. Content comes from the file from/rel.
func Rewrite(t testing.TB, root, rel, from string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(from, rel))
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, root, rel, string(b))
}

// WriteFile writes content to root/rel in place, creating it if needed.
func WriteFile(t testing.TB, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Expand writes the files of the text archive at path (such as
// testdata/xeon-2s.txtar) into a new temporary folder and returns that
// folder, to be used as a receiver's root.
//
// Fixtures of /sys trees are archives rather than folder trees because
// sysfs names such as intel-rapl:0 hold a colon, which Go module archives
// refuse. The format is txtar's: a comment, then files, each introduced by
// a line "-- path --".
func Expand(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	var name string
	var content bytes.Buffer
	flush := func() {
		if name != "" {
			WriteFile(t, root, filepath.FromSlash(name), content.String())
		}
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if l := strings.TrimSuffix(line, "\n"); strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			flush()
			name = strings.TrimSpace(l[3 : len(l)-3])
			content.Reset()
			continue
		}
		if name != "" {
			content.WriteString(line)
		}
	}
	flush()
	return root
}
