package ortlib

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// isolate points every variable the search reads at empty places, so only
// the fixture tree the test builds is found.
func isolate(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("fixture trees use the Linux library names")
	}
	root := t.TempDir()
	t.Setenv(EnvLibraryPath, "")
	t.Setenv(EnvVersion, "")
	t.Setenv(EnvCacheDir, filepath.Join(root, "cache"))
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("LD_LIBRARY_PATH", "")
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONUSERBASE", "NPM_CONFIG_PREFIX", "npm_config_prefix", "NVM_BIN"} {
		t.Setenv(v, "")
	}
	return root
}

func touch(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// npmPackage writes node_modules/onnxruntime-node of version under dir, as
// npm installs it, and returns its library file.
func npmPackage(t *testing.T, dir, version string) string {
	t.Helper()
	pkg := filepath.Join(dir, "node_modules", "onnxruntime-node")
	touch(t, filepath.Join(pkg, "package.json"), `{"name": "onnxruntime-node", "version": "`+version+`"}`)
	bin := filepath.Join(pkg, "bin", "napi-v6", "linux", "x64")
	touch(t, filepath.Join(bin, "onnxruntime_binding.node"), "")
	touch(t, filepath.Join(bin, "libonnxruntime_providers_shared.so"), "")
	if runtime.GOARCH != "amd64" {
		bin = filepath.Join(pkg, "bin", "napi-v6", "linux", runtime.GOARCH)
	}
	return touch(t, filepath.Join(bin, "libonnxruntime.so.1"), "")
}

// pipPackage writes site-packages/onnxruntime of version into site, the
// library named libName, and returns the library file.
func pipPackage(t *testing.T, site, version, libName string) string {
	t.Helper()
	touch(t, filepath.Join(site, "onnxruntime-"+version+".dist-info", "METADATA"), "Name: onnxruntime\nVersion: "+version+"\n")
	touch(t, filepath.Join(site, "onnxruntime", "__init__.py"), `__version__ = "`+version+`"`+"\n")
	touch(t, filepath.Join(site, "onnxruntime", "capi", "onnxruntime_pybind11_state.so"), "")
	touch(t, filepath.Join(site, "onnxruntime", "capi", "libonnxruntime_providers_shared.so"), "")
	return touch(t, filepath.Join(site, "onnxruntime", "capi", libName), "")
}

func TestLocateFindsNpmAndPipPackages(t *testing.T) {
	type want struct{ path, source, version, note, skipped string }
	tests := []struct {
		name  string
		setup func(t *testing.T, root string) want
	}{
		{"npm package in a parent of the working directory", func(t *testing.T, root string) want {
			lib := npmPackage(t, filepath.Join(root, "app"), "1.30.0")
			t.Chdir(mkdir(t, filepath.Join(root, "app", "src", "deep")))
			return want{path: lib, source: "npm package onnxruntime-node in " + filepath.Join(root, "app", "node_modules"), version: "1.30.0"}
		}},
		{"nearest node_modules wins", func(t *testing.T, root string) want {
			npmPackage(t, root, "1.24.3")
			lib := npmPackage(t, filepath.Join(root, "app"), "1.30.0")
			t.Chdir(filepath.Join(root, "app"))
			return want{path: lib, version: "1.30.0"}
		}},
		{"global npm package", func(t *testing.T, root string) want {
			prefix := filepath.Join(root, "npm-prefix")
			t.Setenv("NPM_CONFIG_PREFIX", prefix)
			lib := npmPackage(t, filepath.Join(prefix, "lib"), "1.30.0")
			t.Chdir(mkdir(t, filepath.Join(root, "elsewhere")))
			return want{path: lib, source: "npm package onnxruntime-node in " + filepath.Join(prefix, "lib", "node_modules")}
		}},
		{"pip in the active virtualenv, version from the file name", func(t *testing.T, root string) want {
			venv := filepath.Join(root, "venv")
			t.Setenv("VIRTUAL_ENV", venv)
			site := filepath.Join(venv, "lib", "python3.12", "site-packages")
			lib := pipPackage(t, site, "1.24.3", "libonnxruntime.so.1.24.3")
			t.Chdir(mkdir(t, filepath.Join(root, "work")))
			return want{path: lib, source: "pip package onnxruntime in " + site, version: "1.24.3"}
		}},
		{"pip in the user's packages, version from dist-info, untested release gets a note", func(t *testing.T, root string) want {
			site := filepath.Join(root, "home", ".local", "lib", "python3.11", "site-packages")
			lib := pipPackage(t, site, "1.27.1", "libonnxruntime.so.1")
			t.Chdir(mkdir(t, filepath.Join(root, "work")))
			return want{path: lib, version: "1.27.1", note: "not one ortel is tested with"}
		}},
		{"a release too old is passed over, with why", func(t *testing.T, root string) want {
			venv := filepath.Join(root, "venv")
			t.Setenv("VIRTUAL_ENV", venv)
			old := pipPackage(t, filepath.Join(venv, "lib", "python3.12", "site-packages"), "1.20.1", "libonnxruntime.so.1.20.1")
			lib := npmPackage(t, filepath.Join(root, "app"), "1.30.0")
			t.Chdir(filepath.Join(root, "app"))
			return want{path: lib, version: "1.30.0", skipped: old + " (pip package onnxruntime in "}
		}},
		{"the ortel cache beats npm and pip", func(t *testing.T, root string) want {
			lib := touch(t, filepath.Join(root, "cache", "onnxruntime", DefaultVersion, "libonnxruntime.so.1"), "")
			t.Setenv("VIRTUAL_ENV", filepath.Join(root, "venv"))
			pipPackage(t, filepath.Join(root, "venv", "lib", "python3.12", "site-packages"), "1.30.0", "libonnxruntime.so.1.30.0")
			npmPackage(t, filepath.Join(root, "app"), "1.30.0")
			t.Chdir(filepath.Join(root, "app"))
			return want{path: lib, source: "ortel cache", version: DefaultVersion}
		}},
		{"the active virtualenv beats node_modules", func(t *testing.T, root string) want {
			t.Setenv("VIRTUAL_ENV", filepath.Join(root, "venv"))
			lib := pipPackage(t, filepath.Join(root, "venv", "lib", "python3.12", "site-packages"), "1.30.0", "libonnxruntime.so.1.30.0")
			npmPackage(t, filepath.Join(root, "app"), "1.30.0")
			t.Chdir(filepath.Join(root, "app"))
			return want{path: lib, version: "1.30.0"}
		}},
		{"node_modules beats the user's pip packages", func(t *testing.T, root string) want {
			pipPackage(t, filepath.Join(root, "home", ".local", "lib", "python3.11", "site-packages"), "1.30.0", "libonnxruntime.so.1.30.0")
			lib := npmPackage(t, filepath.Join(root, "app"), "1.24.3")
			t.Chdir(filepath.Join(root, "app"))
			return want{path: lib, version: "1.24.3"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := isolate(t)
			w := tt.setup(t, root)
			lib, err := Locate()
			if err != nil {
				t.Fatalf("Locate: %v", err)
			}
			if lib.Path != w.path {
				t.Errorf("path = %q, want %q", lib.Path, w.path)
			}
			if w.source != "" && lib.Source != w.source {
				t.Errorf("source = %q, want %q", lib.Source, w.source)
			}
			if w.version != "" && lib.Version != w.version {
				t.Errorf("version = %q, want %q", lib.Version, w.version)
			}
			if !strings.Contains(lib.Note, w.note) || (w.note == "" && lib.Note != "") {
				t.Errorf("note = %q, want it to contain %q", lib.Note, w.note)
			}
			skipped := strings.Join(lib.Skipped, "\n")
			if w.skipped == "" && skipped != "" || !strings.Contains(skipped, w.skipped) {
				t.Errorf("skipped = %q, want %q", skipped, w.skipped)
			}
			if w.skipped != "" && !strings.Contains(skipped, "older than 1.24") {
				t.Errorf("skipped = %q does not say why", skipped)
			}
		})
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLocateNotFoundNamesNpmPipAndTheSkipped(t *testing.T) {
	root := isolate(t)
	t.Setenv("VIRTUAL_ENV", filepath.Join(root, "venv"))
	old := pipPackage(t, filepath.Join(root, "venv", "lib", "python3.12", "site-packages"), "1.19.2", "libonnxruntime.so.1.19.2")
	t.Chdir(mkdir(t, filepath.Join(root, "app")))
	_, err := Locate()
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		if err == nil {
			t.Skip("a system copy of ONNX Runtime was found")
		}
		t.Fatalf("err = %v, want *NotFoundError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"npm: node_modules in the working directory",
		filepath.Join(root, "app", "node_modules"), "global npm packages", "the user's pip packages",
		"found but passed over", old, "ONNX Runtime 1.19.2 is older than 1.24", FetchHint,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
}

func TestExplicitLibraryVersionChecked(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv(EnvLibraryPath, touch(t, filepath.Join(dir, "libonnxruntime.so.1.18.0"), ""))
	if _, err := Locate(); err == nil || !strings.Contains(err.Error(), "older than 1.24") {
		t.Errorf("Locate with an explicit 1.18.0: err = %v, want it refused as too old", err)
	}
	plain := touch(t, filepath.Join(dir, "libonnxruntime.so"), "")
	t.Setenv(EnvLibraryPath, plain)
	lib, err := Locate()
	if err != nil || lib.Path != plain || lib.Source != "$"+EnvLibraryPath {
		t.Errorf("Locate = %+v, %v; want %s from $%s", lib, err, plain, EnvLibraryPath)
	}
}

func TestCheckVersion(t *testing.T) {
	tests := []struct{ v, note, err string }{
		{"1.30.0", "", ""},
		{"1.30.2", "", ""},
		{"1.24.3", "", ""},
		{"1.27.1", "not one ortel is tested with", ""},
		{"1.31.0", "newer than ortel is tested with", ""},
		{"2.0.0", "newer than ortel is tested with", ""},
		{"1.23.2", "", "older than 1.24"},
		{"1.9.0", "", "older than 1.24"},
		{"", "version unknown", ""},
		{"1.21.0rc1", "", "older than 1.24"},
	}
	for _, tt := range tests {
		note, err := CheckVersion(tt.v)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("CheckVersion(%q) err = %v, want %q", tt.v, err, tt.err)
			}
			continue
		}
		if err != nil || !strings.Contains(note, tt.note) || (tt.note == "" && note != "") {
			t.Errorf("CheckVersion(%q) = %q, %v; want note %q", tt.v, note, err, tt.note)
		}
	}
}

func TestWithLoadedVersion(t *testing.T) {
	got := withLoadedVersion(Library{Path: "x", Version: "1.30.0"}, "1.27.0")
	if got.Version != "1.27.0" || !strings.Contains(got.Note, "the package says 1.30.0 but the library reports 1.27.0") ||
		!strings.Contains(got.Note, "not one ortel is tested with") {
		t.Errorf("withLoadedVersion = %+v", got)
	}
	if got := withLoadedVersion(Library{Version: ""}, "1.30.0"); got.Version != "1.30.0" || got.Note != "" {
		t.Errorf("an unknown claimed version: %+v, want 1.30.0 and no note", got)
	}
}
