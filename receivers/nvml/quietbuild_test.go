//go:build linux && cgo

package nvml

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// quietCC is the C compiler wrapper the Makefile gives the go command.
func quietCC(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../scripts/cc-quiet-nvml.sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestQuietBuildOfGoNVML builds go-nvml as `make build` does, through
// scripts/cc-quiet-nvml.sh: the build prints nothing, where the plain go
// command prints about 150 lines of deprecation warnings. A define unique
// to this run makes the go command compile the cgo packages again instead
// of taking them from its cache (a cached build prints nothing either way).
func TestQuietBuildOfGoNVML(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	cmd := exec.Command(goCmd, "build", "github.com/NVIDIA/go-nvml/pkg/nvml")
	cmd.Env = append(os.Environ(),
		"CC="+quietCC(t), "ORTEL_REAL_CC=",
		fmt.Sprintf("CGO_CFLAGS=-O2 -g -DORTEL_QUIET_BUILD_TEST=%d", time.Now().UnixNano()))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go build go-nvml: %v\n%s", err, out)
	}
	if len(out) != 0 {
		t.Errorf("go build go-nvml printed %d lines, want none:\n%s", strings.Count(string(out), "\n"), out)
	}
}

// TestQuietCCKeepsOtherWarnings: the wrapper silences deprecation warnings
// in go-nvml's directory only; a package of ortel's own calling a
// deprecated C function still hears about it.
func TestQuietCCKeepsOtherWarnings(t *testing.T) {
	cc := quietCC(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "old.c")
	if err := os.WriteFile(src, []byte("__attribute__((deprecated)) int old(void);\nint f(void) { return old(); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pkgDir string
		warns  bool
	}{
		{"/src/ortel/instrument/internal/ortapi", true},
		{"/root/go/pkg/mod/github.com/!n!v!i!d!i!a/go-nvml@v0.13.3-0/pkg/nvml", false},
		{"/src/ortel/vendor/github.com/NVIDIA/go-nvml/pkg/nvml", false},
		{"/src/ortel/vendor/github.com/NVIDIA/go-nvml/pkg/dl", true},
	} {
		// As cmd/go compiles a cgo file: "-I <package dir>" first.
		cmd := exec.Command(cc, "-I", tt.pkgDir, "-c", src, "-o", filepath.Join(dir, "old.o"))
		cmd.Env = append(os.Environ(), "ORTEL_REAL_CC=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("compile as %s: %v\n%s", tt.pkgDir, err, out)
		}
		if warns := strings.Contains(string(out), "deprecated"); warns != tt.warns {
			t.Errorf("compiled as a file of %s: deprecation warning %v, want %v\n%s", tt.pkgDir, warns, tt.warns, out)
		}
	}
}
