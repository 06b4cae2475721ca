// Package install checks the promise of the README's first install line,
// `go install github.com/ortel-dev/ortel/cmd/ortel@VERSION`: the module as
// committed (what a module proxy serves) builds outside any checkout, and
// the binary finds an ONNX Runtime that npm installed in the user's
// project and benchmarks a real model with it.
package install

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

const module = "github.com/ortel-dev/ortel"

// TestGoInstallFindsNpmORTAndBenches serves the committed tree (git archive
// HEAD, so an uncommitted generated or embedded file fails it) from a
// file-system module proxy, runs `go install module/cmd/ortel@VERSION` in
// an empty folder into an empty GOBIN (the go command refuses a module
// whose go.mod has replace directives there, as it does for the public
// proxy), then runs the binary in a project whose node_modules holds the
// onnxruntime-node package scripts/fetch.sh installed, with an empty ortel
// cache: doctor must name that library, and bench must run the real Silero
// VAD model on it.
func TestGoInstallFindsNpmORTAndBenches(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ortel from a module proxy (minutes)")
	}
	goBin := testenv.Tool(t, "go", "the Go toolchain")
	testenv.Tool(t, "git", "apt-get install git")
	testenv.Tool(t, "cc", "apt-get install gcc (cgo needs a C compiler)")
	pkg := filepath.Join(ortlib.CacheDir(), "node", ortlib.DefaultVersion, "node_modules", "onnxruntime-node")
	if _, err := os.Stat(filepath.Join(pkg, "package.json")); err != nil {
		testenv.Missing(t, "needs onnxruntime-node %s installed by scripts/fetch.sh node: %v", ortlib.DefaultVersion, err)
	}
	model := testenv.Model(t, "silero_vad_v5.onnx")

	root := t.TempDir()
	head := gitOutput(t, "rev-parse", "--short=12", "HEAD")
	version := "v0.0.0-installtest." + head + fmt.Sprintf(".%d", time.Now().UnixNano())
	proxy := filepath.Join(root, "proxy")
	writeProxy(t, proxy, version)
	modCache := goEnv(t, goBin, "GOMODCACHE")
	t.Cleanup(func() { removeFromModCache(modCache, version) })

	gobin := filepath.Join(root, "bin")
	work := filepath.Join(root, "elsewhere")
	mkdir(t, gobin, work)
	install := exec.Command(goBin, "install", module+"/cmd/ortel@"+version)
	install.Dir = work
	install.Env = append(os.Environ(),
		"GOBIN="+gobin, "GOFLAGS=-mod=mod", "CGO_ENABLED=1", "GOTOOLCHAIN=local",
		// ortel from the test proxy; its dependencies from the module
		// cache's download folder (itself a module proxy), no network.
		"GOPROXY=file://"+proxy+",file://"+filepath.Join(modCache, "cache", "download"),
		// go install pkg@version checks modules against the checksum
		// database, not the module's go.sum; the test machines cannot
		// reach it, and the test's version of ortel is in none.
		"GOSUMDB=off", "GOWORK=off")
	start := time.Now()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install %s/cmd/ortel@%s: %v\n%s", module, version, err, out)
	}
	t.Logf("go install took %s", time.Since(start).Round(time.Second))
	bin := filepath.Join(gobin, "ortel")

	project := filepath.Join(root, "project")
	service := filepath.Join(project, "service")
	mkdir(t, filepath.Join(project, "node_modules"), service)
	if err := os.Symlink(pkg, filepath.Join(project, "node_modules", "onnxruntime-node")); err != nil {
		t.Fatal(err)
	}
	env := userEnv(root)
	if got, want := string(runIn(t, service, env, bin, "version")), "ortel "+strings.TrimPrefix(version, "v")+"\n"; !strings.HasPrefix(got, want) {
		t.Errorf("ortel version printed %q, want it to start with %q (the version go install recorded)", got, want)
	}
	lib := filepath.Join(project, "node_modules", "onnxruntime-node", "bin", "napi-v6", "linux", "x64", "libonnxruntime.so.1")

	var doc struct {
		ORT struct {
			Found         bool
			Path, Version string
			Source        string
		} `json:"onnxruntime"`
	}
	out := runIn(t, service, env, bin, "doctor", "--format", "json")
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("doctor --format json: %v\n%s", err, out)
	}
	wantSource := "npm package onnxruntime-node in " + filepath.Join(project, "node_modules")
	if !doc.ORT.Found || doc.ORT.Path != lib || doc.ORT.Source != wantSource || doc.ORT.Version != ortlib.DefaultVersion {
		t.Fatalf("doctor found %+v; want %s from %q, version %s", doc.ORT, lib, wantSource, ortlib.DefaultVersion)
	}

	outDir := filepath.Join(root, "out")
	runIn(t, service, env, bin, "bench", model, "--runs", "20", "--warmup", "2", "--profile-runs", "2",
		"--no-hardware", "--no-telemetry", "--quiet", "--out", outDir)
	b, err := os.ReadFile(filepath.Join(outDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Runtime struct {
			LibraryPath string `json:"library_path"`
			Version     string `json:"ort_version"`
		} `json:"runtime"`
		Config struct {
			Runs int `json:"runs"`
		} `json:"config"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Runtime.LibraryPath != lib || rep.Runtime.Version != ortlib.DefaultVersion || rep.Config.Runs != 20 {
		t.Errorf("report.json runtime %+v, %d runs; want the npm package's %s, version %s, 20 runs",
			rep.Runtime, rep.Config.Runs, lib, ortlib.DefaultVersion)
	}
	t.Logf("report.json runtime: %+v", rep.Runtime)
}

// writeProxy lays out a file-system module proxy holding the module at
// version, its zip made from the committed tree (symbolic links left out,
// as the go command does).
func writeProxy(t *testing.T, dir, version string) {
	t.Helper()
	at := filepath.Join(dir, module, "@v")
	mkdir(t, at)
	archive := exec.Command("git", "archive", "--format=tar", "HEAD")
	archive.Dir = repoRoot(t)
	tarball, err := archive.Output()
	if err != nil {
		t.Fatalf("git archive HEAD: %v", err)
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	tr := tar.NewReader(bytes.NewReader(tarball))
	var gomod []byte
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == "go.mod" {
			gomod = body
		}
		w, err := zw.Create(module + "@" + version + "/" + hdr.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	for name, body := range map[string][]byte{
		"list": []byte(version + "\n"), version + ".info": []byte(info),
		version + ".mod": gomod, version + ".zip": zbuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// removeFromModCache deletes the test's version from the module cache
// (its files are read-only there).
func removeFromModCache(modCache, version string) {
	dir := filepath.Join(modCache, module+"@"+version)
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	os.RemoveAll(dir)
	// ortel is never a downloaded dependency here: its download folder
	// holds only what the test put there.
	os.RemoveAll(filepath.Join(modCache, "cache", "download", module))
}

// userEnv is a new user's environment: an empty ortel cache and home, no
// library path, no Python environment, no telemetry settings.
func userEnv(root string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "OTEL_"), strings.HasPrefix(k, "ORTEL_"), k == "HOME", k == "LD_LIBRARY_PATH",
			k == ortlib.EnvLibraryPath, k == "VIRTUAL_ENV", k == "CONDA_PREFIX", k == "XDG_CACHE_HOME":
			continue
		}
		env = append(env, kv)
	}
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o755)
	return append(env, "HOME="+home, "ORTEL_CACHE_DIR="+filepath.Join(root, "empty-cache"))
}

func runIn(t *testing.T, dir string, env []string, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ortel %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func gitOutput(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

func goEnv(t *testing.T, goBin, key string) string {
	t.Helper()
	out, err := exec.Command(goBin, "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

func mkdir(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}
