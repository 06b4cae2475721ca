package release

import (
	"bufio"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/stack"
)

// target is what one release binary must be.
type target struct {
	machine elf.Machine
	interp  string // the glibc dynamic loader of the architecture
}

var targets = map[string]target{
	"amd64": {elf.EM_X86_64, "/lib64/ld-linux-x86-64.so.2"},
	"arm64": {elf.EM_AARCH64, "/lib/ld-linux-aarch64.so.1"},
}

// baseGlibc is the glibc of the image's run stage, debian:12 (bookworm):
// a binary needing a newer symbol version would not start there.
// TestDockerfileRunsOnBookworm keeps the Dockerfile on that release.
const baseGlibc = "2.36"

// checkBinary lists what is wrong with the release binary at path for
// linux/arch; empty when nothing is.
func checkBinary(path, arch string) []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	want, ok := targets[arch]
	if !ok {
		return []string{"unknown architecture " + arch}
	}
	f, err := elf.Open(path)
	if err != nil {
		return []string{fmt.Sprintf("not an ELF file: %v", err)}
	}
	defer f.Close()
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		add("class %v, %v; want 64-bit little-endian", f.Class, f.Data)
	}
	if f.Machine != want.machine {
		add("machine %v, want %v", f.Machine, want.machine)
	}
	// cgo links through the system linker: a dynamic executable with
	// glibc's loader. A CGO_ENABLED=0 build has no interpreter.
	interp := ""
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(p.Open())
			interp = strings.TrimRight(string(b), "\x00")
		}
	}
	if interp != want.interp {
		add("dynamic loader %q, want %q (a cgo build against glibc)", interp, want.interp)
	}
	libs, err := f.ImportedLibraries()
	if err != nil || !slices.Contains(libs, "libc.so.6") {
		add("imported libraries %v (%v): want libc.so.6", libs, err)
	}
	// Every glibc symbol version the binary needs exists in the base image.
	syms, err := f.ImportedSymbols()
	if err != nil {
		add("imported symbols: %v", err)
	}
	newest := ""
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if ok && versionLess(newest, v) {
			newest = v
		}
	}
	if newest == "" {
		add("no versioned glibc symbol: not linked against glibc")
	} else if versionLess(baseGlibc, newest) {
		add("needs GLIBC_%s, newer than the image's %s: build it on Debian 12 (the Dockerfile's build stage)", newest, baseGlibc)
	}
	// -s -w: no symbol table, no DWARF.
	for _, s := range f.Sections {
		if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_") {
			add("section %s present: the binary is not stripped", s.Name)
		}
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		add("no Go build information: %v", err)
		return bad
	}
	if bi.Path != "github.com/ortel-dev/ortel/cmd/ortel" {
		add("main package %q, want the ortel CLI", bi.Path)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for k, v := range map[string]string{"GOOS": "linux", "GOARCH": arch, "CGO_ENABLED": "1", "-trimpath": "true"} {
		if settings[k] != v {
			add("build setting %s=%q, want %q", k, settings[k], v)
		}
	}
	for k := range settings {
		if strings.HasPrefix(k, "vcs") {
			add("build setting %s: a VCS stamp makes the build depend on the checkout", k)
		}
	}
	// -buildid= leaves no Go build id note (the id hashes the build's
	// inputs, paths included).
	if f.Section(".note.go.buildid") != nil {
		add("a Go build id note is present: build with -ldflags=-buildid=")
	}
	return bad
}

// versionLess compares dotted version numbers ("2.9" < "2.36"); "" is
// less than anything.
func versionLess(a, b string) bool {
	if a == "" {
		return b != ""
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"", "2.2.5", true}, {"2.2.5", "", false}, {"2.9", "2.36", true}, {"2.36", "2.9", false},
		{"2.36", "2.36", false}, {"2.17", "2.34", true}, {"2.3.4", "2.3", false},
	} {
		if got := versionLess(c.a, c.b); got != c.want {
			t.Errorf("versionLess(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestReleaseBinaries checks the folder `make release-binaries` filled
// (ORTEL_RELEASE_DIR): both architectures present and sound, SHA256SUMS
// true, and the binary of this machine's architecture runs and prints the
// version it was given (ORTEL_VERSION, else the source's default).
func TestReleaseBinaries(t *testing.T) {
	dir := os.Getenv("ORTEL_RELEASE_DIR")
	if dir == "" {
		t.Skip("ORTEL_RELEASE_DIR is not set: `make release-binaries` builds the binaries and runs this check")
	}
	if !filepath.IsAbs(dir) { // relative to the repository root, as make gives it
		root, err := stack.RepoRoot(".")
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, dir)
	}
	sums := readSums(t, filepath.Join(dir, "SHA256SUMS"))
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			name := "ortel-linux-" + arch
			path := filepath.Join(dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (scripts/release-binaries.sh builds it)", err)
			}
			sum := sha256.Sum256(b)
			if got := hex.EncodeToString(sum[:]); sums[name] != got {
				t.Errorf("SHA256SUMS says %q for %s, the file hashes to %s", sums[name], name, got)
			}
			for _, p := range checkBinary(path, arch) {
				t.Errorf("%s: %s", name, p)
			}
			if arch != runtime.GOARCH {
				return
			}
			out, err := exec.Command(path, "version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s version: %v\n%s", name, err, out)
			}
			want := "ortel " + os.Getenv("ORTEL_VERSION") + "\n"
			if os.Getenv("ORTEL_VERSION") == "" {
				want = "ortel 0.1.0-dev\n" // main.version's default
			}
			if !strings.HasPrefix(string(out), want) {
				t.Errorf("%s version printed %q, want it to start with %q", name, out, want)
			}
		})
	}
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("%s: line %q is not \"SUM  NAME\"", path, sc.Text())
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

// TestDockerfileRunsOnBookworm: the image builds on golang:*-bookworm and
// runs on debian:12, the glibc baseGlibc stands for.
func TestDockerfileRunsOnBookworm(t *testing.T) {
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	froms, err := stack.DockerfileImages(filepath.Join(root, stack.Dockerfile))
	if err != nil {
		t.Fatal(err)
	}
	if len(froms) != 2 || !strings.HasSuffix(froms[0], "-bookworm") || !strings.HasPrefix(froms[1], "debian:12.") {
		t.Errorf("Dockerfile stages %q: want a golang:*-bookworm build stage and a debian:12.* run stage (glibc %s)", froms, baseGlibc)
	}
}
