package semgen

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Output names the files the generator writes.
type Output struct {
	GoDir    string // directory of package semconv: attributes_gen.go, metrics_gen.go, instruments_gen_test.go
	DocsFile string // the Markdown metrics reference
	// ReceiversDir is the directory of the receiver packages: each
	// receivers/<name> source gets <ReceiversDir>/<name>/metrics_gen.go.
	// Empty: no receiver tables are written.
	ReceiversDir string
}

// ReceiverFile is the name of the generated table in a receiver package.
const ReceiverFile = "metrics_gen.go"

// Generate loads the registry under root in fsys and renders every output
// file, keyed by the path it is written to.
func Generate(fsys fs.FS, root string, out Output) (map[string][]byte, error) {
	reg, err := Load(fsys, root)
	if err != nil {
		return nil, err
	}
	attrs, err := RenderAttributes(reg)
	if err != nil {
		return nil, err
	}
	metrics, err := RenderMetrics(reg)
	if err != nil {
		return nil, err
	}
	tests, err := RenderInstrumentTests(reg)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		filepath.Join(out.GoDir, "attributes_gen.go"):       attrs,
		filepath.Join(out.GoDir, "metrics_gen.go"):          metrics,
		filepath.Join(out.GoDir, "instruments_gen_test.go"): tests,
		out.DocsFile: RenderDocs(reg),
	}
	if out.ReceiversDir == "" {
		return files, nil
	}
	for _, r := range reg.Receivers() {
		src, err := RenderReceiver(reg, r)
		if err != nil {
			return nil, err
		}
		files[filepath.Join(out.ReceiversDir, r.Package, ReceiverFile)] = src
	}
	return files, nil
}

// Write writes files, leaving a file untouched when its content is
// already right.
func Write(files map[string][]byte) error {
	for path, data := range files {
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return nil
}
