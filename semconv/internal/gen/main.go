// Command gen generates package semconv, each receiver package's table of
// the metrics it emits, and docs/metrics.md from the YAML registry. It is
// run by `go generate ./...` (through semconv/doc.go) from the semconv
// directory:
//
//	go run ./internal/gen [-registry registry] [-go .] [-docs ../docs/metrics.md] [-receivers ../receivers]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ortel-dev/ortel/semconv/internal/semgen"
)

func main() {
	registry := flag.String("registry", "registry", "directory of the YAML registry")
	goDir := flag.String("go", ".", "directory of package semconv, where the Go files are written")
	docs := flag.String("docs", "../docs/metrics.md", "path of the generated metrics reference")
	receivers := flag.String("receivers", "../receivers", "directory of the receiver packages, where each one's "+semgen.ReceiverFile+" is written (empty: none)")
	flag.Parse()
	if err := run(*registry, semgen.Output{GoDir: *goDir, DocsFile: *docs, ReceiversDir: *receivers}); err != nil {
		fmt.Fprintln(os.Stderr, "semconv generator:", err)
		os.Exit(1)
	}
}

func run(registry string, out semgen.Output) error {
	files, err := semgen.Generate(os.DirFS(filepath.Dir(registry)), filepath.Base(registry), out)
	if err != nil {
		return err
	}
	// A receiver source names an existing package: a typo in the registry
	// must not create a new directory.
	if out.ReceiversDir != "" {
		for path := range files {
			dir := filepath.Dir(path)
			if filepath.Dir(dir) != filepath.Clean(out.ReceiversDir) {
				continue
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return fmt.Errorf("the registry names source %s%s, but there is no package %s", semgen.ReceiverPrefix, filepath.Base(dir), dir)
			}
		}
	}
	return semgen.Write(files)
}
