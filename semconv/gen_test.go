package semconv_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ortel-dev/ortel/semconv/internal/semgen"
)

// TestGeneratedFilesUpToDate regenerates everything into a temporary
// directory and fails when a committed generated file differs, so that a
// registry edit without `go generate` cannot pass CI.
func TestGeneratedFilesUpToDate(t *testing.T) {
	tmp := t.TempDir()
	goDir := filepath.Join(tmp, "semconv")
	docs := filepath.Join(tmp, "docs", "metrics.md")
	files, err := semgen.Generate(os.DirFS("."), "registry", semgen.Output{GoDir: goDir, DocsFile: docs})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if err := semgen.Write(files); err != nil {
		t.Fatalf("write: %v", err)
	}
	committed := map[string]string{
		filepath.Join(goDir, "attributes_gen.go"):       "attributes_gen.go",
		filepath.Join(goDir, "metrics_gen.go"):          "metrics_gen.go",
		filepath.Join(goDir, "instruments_gen_test.go"): "instruments_gen_test.go",
		docs: filepath.Join("..", "docs", "metrics.md"),
	}
	if len(files) != len(committed) {
		t.Fatalf("generator writes %d files, this test checks %d; update the test", len(files), len(committed))
	}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		rel, ok := committed[p]
		if !ok {
			t.Errorf("generator writes %s, which this test does not check", p)
			continue
		}
		fresh, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		old, err := os.ReadFile(rel)
		if err != nil {
			t.Errorf("%s: %v; run go generate ./semconv/...", rel, err)
			continue
		}
		if !bytes.Equal(old, fresh) {
			t.Errorf("%s is stale (%s); run go generate ./semconv/... and commit the result", rel, firstDiff(old, fresh))
		}
	}
}

// firstDiff describes the first place where have and want differ.
func firstDiff(have, want []byte) string {
	hl, wl := bytes.Split(have, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(hl) && i < len(wl); i++ {
		if bytes.Equal(hl[i], wl[i]) {
			continue
		}
		col := 0
		for col < len(hl[i]) && col < len(wl[i]) && hl[i][col] == wl[i][col] {
			col++
		}
		from := max(0, col-30)
		return fmt.Sprintf("line %d, column %d: have %q, want %q", i+1, col+1, clip(hl[i], from), clip(wl[i], from))
	}
	return fmt.Sprintf("have %d lines, want %d", len(hl), len(wl))
}

func clip(b []byte, from int) []byte {
	b = b[min(from, len(b)):]
	return b[:min(len(b), 60)]
}
