// Command gen generates package semconv and docs/metrics.md from the YAML
// registry. It is run by `go generate ./semconv/...` from the semconv
// directory:
//
//	go run ./internal/gen [-registry registry] [-go .] [-docs ../docs/metrics.md]
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
	flag.Parse()
	files, err := semgen.Generate(os.DirFS(filepath.Dir(*registry)), filepath.Base(*registry), semgen.Output{GoDir: *goDir, DocsFile: *docs})
	if err == nil {
		err = semgen.Write(files)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "semconv generator:", err)
		os.Exit(1)
	}
}
