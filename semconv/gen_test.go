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
// directory and fails when a committed generated file differs or is
// missing, or when a receiver package holds a generated table the
// registry no longer gives it, so that a registry edit without
// `go generate ./...` cannot pass CI.
func TestGeneratedFilesUpToDate(t *testing.T) {
	tmp := t.TempDir()
	files, err := semgen.Generate(os.DirFS("."), "registry", semgen.Output{
		GoDir:        filepath.Join(tmp, "semconv"),
		DocsFile:     filepath.Join(tmp, "docs", "metrics.md"),
		ReceiversDir: filepath.Join(tmp, "receivers"),
	})
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	if err := semgen.Write(files); err != nil {
		t.Fatalf("write: %v", err)
	}
	// Each generated file's committed copy: the same path under the
	// repository root (this test runs in semconv/).
	var paths []string
	written := map[string]bool{}
	for p := range files {
		paths = append(paths, p)
		rel, err := filepath.Rel(tmp, p)
		if err != nil {
			t.Fatal(err)
		}
		written[filepath.Join("..", rel)] = true
	}
	sort.Strings(paths)
	for _, p := range paths {
		rel, _ := filepath.Rel(tmp, p)
		committed := filepath.Join("..", rel)
		fresh, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		old, err := os.ReadFile(committed)
		if err != nil {
			t.Errorf("%s: %v; run go generate ./... and commit the result", committed, err)
			continue
		}
		if !bytes.Equal(old, fresh) {
			t.Errorf("%s is stale (%s); run go generate ./... and commit the result", committed, firstDiff(old, fresh))
		}
	}
	for _, want := range []string{"attributes_gen.go", "metrics_gen.go", "instruments_gen_test.go"} {
		if !written[filepath.Join("..", "semconv", want)] {
			t.Errorf("the generator no longer writes semconv/%s; update this test", want)
		}
	}
	stray, err := filepath.Glob(filepath.Join("..", "receivers", "*", semgen.ReceiverFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stray {
		if !written[p] {
			t.Errorf("%s is a generated table, but the registry names no metric with source receivers/%s; delete it", p, filepath.Base(filepath.Dir(p)))
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
