package ortlib

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// Library is the ONNX Runtime library file Locate chose, and why.
type Library struct {
	// Path is the library file.
	Path string `json:"path"`
	// Source says where it was found, e.g. "ortel cache",
	// "npm package onnxruntime-node in /srv/app/node_modules" or
	// "pip package onnxruntime in /home/me/.venv/lib/python3.12/site-packages".
	Source string `json:"source"`
	// Version is the release, read from the file name or the package's
	// metadata ("" when neither says); after Init, the library's own
	// OrtGetApiBase()->GetVersionString().
	Version string `json:"version,omitempty"`
	// Note is a warning worth showing the user, such as a release ortel is
	// not tested with ("": none).
	Note string `json:"note,omitempty"`
	// Skipped lists libraries passed over before this one, each with why
	// (a release too old to load).
	Skipped []string `json:"skipped,omitempty"`
}

// candidate is a library file a place holds.
type candidate struct{ path, source, version string }

// place is one spot of the search: what to say about it when nothing is
// found there, and how to list the library files it holds (run only when
// the places before it held no usable library).
type place struct {
	desc string
	find func() []candidate
}

// Locate finds the ONNX Runtime library, looking in order at:
//
//  1. $ONNXRUNTIME_SHARED_LIBRARY_PATH (a missing file is an error);
//  2. the ortel cache, $ORTEL_CACHE_DIR/onnxruntime/<version>/ (what
//     `ortel fetch ort` writes);
//  3. an active Python virtualenv or conda environment ($VIRTUAL_ENV,
//     $CONDA_PREFIX): site-packages/onnxruntime/capi/libonnxruntime.so*,
//     installed by `pip install onnxruntime`;
//  4. node_modules/onnxruntime-node in the working directory and each of its
//     parents: bin/napi-v*/<platform>/<arch>/libonnxruntime.so.1, installed
//     by `npm install onnxruntime-node`;
//  5. the user's pip packages (~/.local/lib/python3.*/site-packages,
//     $PYTHONUSERBASE, pyenv versions);
//  6. global npm packages ($NPM_CONFIG_PREFIX, ~/.npm-global, nvm's current
//     node, /usr/local/lib/node_modules, /usr/lib/node_modules);
//  7. system pip packages (/usr/local/lib/python3.*/{dist,site}-packages,
//     /usr/lib/python3*/{dist,site}-packages);
//  8. the system library folders (LD_LIBRARY_PATH, /usr/local/lib, ...).
//
// The nearest, most specific copy wins. A library whose release is older
// than MinVersion is passed over (listed in Skipped, or in the
// *NotFoundError) and the search goes on; an untested release is used with
// a Note.
func Locate() (Library, error) {
	if p := os.Getenv(EnvLibraryPath); p != "" {
		return explicitLibrary(p)
	}
	var tried, skipped []string
	tried = append(tried, "$"+EnvLibraryPath+" (not set)")
	for _, pl := range places() {
		cands := pl.find()
		if len(cands) == 0 {
			tried = append(tried, pl.desc)
			continue
		}
		for _, c := range cands {
			note, err := CheckVersion(c.version)
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%s (%s): %v", c.path, c.source, err))
				continue
			}
			return Library{Path: c.path, Source: c.source, Version: c.version, Note: note, Skipped: skipped}, nil
		}
	}
	return Library{}, &NotFoundError{Tried: tried, Skipped: skipped}
}

// explicitLibrary checks the file $ONNXRUNTIME_SHARED_LIBRARY_PATH names.
func explicitLibrary(p string) (Library, error) {
	if !isFile(p) {
		return Library{}, fmt.Errorf("%s=%q: no such file", EnvLibraryPath, p)
	}
	lib := Library{Path: p, Source: "$" + EnvLibraryPath, Version: versionFromFileName(p)}
	if lib.Version == "" {
		return lib, nil // checked once loaded, from the library itself
	}
	note, err := CheckVersion(lib.Version)
	if err != nil {
		return Library{}, fmt.Errorf("%s=%q: %w", EnvLibraryPath, p, err)
	}
	lib.Note = note
	return lib, nil
}

// places lists the search after the environment variable, in order.
func places() []place {
	v := Version()
	cache := filepath.Join(CacheDir(), "onnxruntime", v)
	out := []place{{
		desc: cache + " (the ortel cache, ONNX Runtime " + v + ")",
		find: func() []candidate { return filesIn(cache, "ortel cache", v) },
	}}
	if envs := pythonEnvs(); len(envs) > 0 {
		out = append(out, pipPlace("the active Python environment", envs))
	}
	out = append(out, npmPlace("node_modules in the working directory and its parents", localNodeModules()))
	out = append(out, pipPlace("the user's pip packages", userSitePackages()))
	out = append(out, npmPlace("global npm packages", globalNodeModules()))
	out = append(out, pipPlace("system pip packages", systemSitePackages()))
	sys := systemDirs()
	out = append(out, place{
		desc: "system library folders: " + strings.Join(sys, ", "),
		find: func() []candidate {
			var cs []candidate
			for _, d := range sys {
				cs = append(cs, filesIn(d, "system library folder "+d, "")...)
			}
			return cs
		},
	})
	return out
}

// filesIn lists the library files in dir under their usual names;
// version, when "", is read from each file name.
func filesIn(dir, source, version string) []candidate {
	var cs []candidate
	for _, n := range libNames(Version()) {
		p := filepath.Join(dir, n)
		if !isFile(p) {
			continue
		}
		v := version
		if v == "" {
			v = versionFromFileName(p)
		}
		cs = append(cs, candidate{path: p, source: source, version: v})
		if version != "" {
			break // one file is enough where the version is known
		}
	}
	return cs
}

// ---- pip ----------------------------------------------------------------

// pipPlace looks for onnxruntime/capi/libonnxruntime* in site-packages
// folders, matched lazily (the patterns hold globs).
func pipPlace(what string, patterns []string) place {
	return place{
		desc: "pip: " + what + " (" + strings.Join(patterns, ", ") + ")/onnxruntime/capi",
		find: func() []candidate {
			var cs []candidate
			for _, site := range globAll(patterns) {
				cs = append(cs, pipLibraries(site)...)
			}
			return cs
		},
	}
}

// pipLibraries lists the ONNX Runtime libraries of the onnxruntime package
// (or onnxruntime-gpu, same folder) in one site-packages folder.
func pipLibraries(site string) []candidate {
	capi := filepath.Join(site, "onnxruntime", "capi")
	pattern := "libonnxruntime.so*"
	switch runtime.GOOS {
	case "darwin":
		pattern = "libonnxruntime*.dylib"
	case "windows":
		pattern = "onnxruntime.dll"
	}
	files, _ := filepath.Glob(filepath.Join(capi, pattern))
	if len(files) == 0 {
		return nil
	}
	meta := pipVersion(site)
	var cs []candidate
	for _, f := range files {
		if !isFile(f) {
			continue
		}
		v := versionFromFileName(f)
		if v == "" {
			v = meta
		}
		cs = append(cs, candidate{path: f, source: "pip package onnxruntime in " + site, version: v})
	}
	return cs
}

var distInfo = regexp.MustCompile(`^onnxruntime(?:[_-][a-z0-9_]+)?-([0-9][0-9A-Za-z.]*)\.dist-info$`)

// pipVersion reads the installed onnxruntime release from its
// *.dist-info folder name, else from onnxruntime/__init__.py.
func pipVersion(site string) string {
	infos, _ := filepath.Glob(filepath.Join(site, "onnxruntime*.dist-info"))
	for _, d := range infos {
		if m := distInfo.FindStringSubmatch(filepath.Base(d)); m != nil {
			return m[1]
		}
	}
	b, err := os.ReadFile(filepath.Join(site, "onnxruntime", "__init__.py"))
	if err != nil {
		return ""
	}
	if m := regexp.MustCompile(`(?m)^__version__\s*=\s*["']([^"']+)["']`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return ""
}

// pythonEnvs are the site-packages patterns of an active virtualenv or
// conda environment.
func pythonEnvs() []string {
	var out []string
	for _, env := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if d := os.Getenv(env); d != "" {
			out = append(out, filepath.Join(d, "lib", "python3*", "site-packages"),
				filepath.Join(d, "Lib", "site-packages"))
		}
	}
	return out
}

func userSitePackages() []string {
	var out []string
	if d := os.Getenv("PYTHONUSERBASE"); d != "" {
		out = append(out, filepath.Join(d, "lib", "python3*", "site-packages"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out,
			filepath.Join(home, ".local", "lib", "python3*", "site-packages"),
			filepath.Join(home, ".pyenv", "versions", "*", "lib", "python3*", "site-packages"))
	}
	return out
}

func systemSitePackages() []string {
	return []string{
		"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages", "/usr/lib/python3*/site-packages",
		"/usr/lib64/python3*/site-packages", "/opt/conda/lib/python3*/site-packages",
	}
}

// ---- npm ----------------------------------------------------------------

// npmPlace looks for onnxruntime-node in node_modules folders.
func npmPlace(what string, roots []string) place {
	desc := "npm: " + what
	if len(roots) > 0 && len(roots) <= 4 {
		desc += " (" + strings.Join(roots, ", ") + ")"
	} else if len(roots) > 4 {
		desc += " (" + strings.Join(roots[:2], ", ") + ", ... " + roots[len(roots)-1] + ")"
	}
	return place{
		desc: desc + "/onnxruntime-node",
		find: func() []candidate {
			var cs []candidate
			for _, r := range roots {
				cs = append(cs, npmLibraries(r)...)
			}
			return cs
		},
	}
}

// npmLibraries lists the ONNX Runtime library that the onnxruntime-node
// package in node_modules folder root ships for this platform.
func npmLibraries(root string) []candidate {
	pkg := filepath.Join(root, "onnxruntime-node")
	platform, arch := npmPlatform()
	files, _ := filepath.Glob(filepath.Join(pkg, "bin", "napi-v*", platform, arch, "*onnxruntime*"))
	sort.Sort(sort.Reverse(sort.StringSlice(files))) // the newest napi-v first
	version := npmVersion(pkg)
	var cs []candidate
	for _, f := range files {
		base := filepath.Base(f)
		if !isFile(f) || !isLibraryName(base) {
			continue
		}
		cs = append(cs, candidate{path: f, source: "npm package onnxruntime-node in " + root, version: version})
	}
	return cs
}

// isLibraryName tells the ONNX Runtime library from the package's other
// files (the Node.js addon onnxruntime_binding.node, provider libraries).
func isLibraryName(base string) bool {
	switch runtime.GOOS {
	case "darwin":
		return strings.HasPrefix(base, "libonnxruntime") && strings.HasSuffix(base, ".dylib") && !strings.Contains(base, "providers")
	case "windows":
		return base == "onnxruntime.dll"
	default:
		return strings.HasPrefix(base, "libonnxruntime.so")
	}
}

// npmPlatform is onnxruntime-node's name for this OS and CPU.
func npmPlatform() (string, string) {
	platform := runtime.GOOS
	if platform == "windows" {
		platform = "win32"
	}
	arch := runtime.GOARCH
	if arch == "amd64" {
		arch = "x64"
	}
	return platform, arch
}

// npmVersion reads the package's version from its package.json.
func npmVersion(pkg string) string {
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return ""
	}
	var meta struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &meta) != nil {
		return ""
	}
	return meta.Version
}

// localNodeModules are the node_modules folders of the working directory
// and its parents, nearest first.
func localNodeModules() []string {
	dir, err := os.Getwd()
	if err != nil {
		return nil
	}
	var out []string
	for {
		out = append(out, filepath.Join(dir, "node_modules"))
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// globalNodeModules are where `npm install -g` puts packages.
func globalNodeModules() []string {
	var out []string
	for _, env := range []string{"NPM_CONFIG_PREFIX", "npm_config_prefix"} {
		if d := os.Getenv(env); d != "" {
			out = append(out, filepath.Join(d, "lib", "node_modules"))
		}
	}
	if d := os.Getenv("NVM_BIN"); d != "" {
		out = append(out, filepath.Join(filepath.Dir(d), "lib", "node_modules"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(home, ".npm-global", "lib", "node_modules"))
	}
	return append(out, "/usr/local/lib/node_modules", "/usr/lib/node_modules", "/opt/homebrew/lib/node_modules")
}

// ---- helpers ------------------------------------------------------------

// globAll expands the patterns in order, each match once.
func globAll(patterns []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range patterns {
		matches, _ := filepath.Glob(p)
		sort.Strings(matches)
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
}

var fileVersion = regexp.MustCompile(`(?:\.so\.|onnxruntime\.)(\d+\.\d+\.\d+)(?:\.dylib)?$`)

// versionFromFileName reads the release from a versioned library name:
// libonnxruntime.so.1.20.1 or libonnxruntime.1.20.1.dylib ("" otherwise;
// libonnxruntime.so.1 names only the ABI).
func versionFromFileName(p string) string {
	if m := fileVersion.FindStringSubmatch(filepath.Base(p)); m != nil {
		return m[1]
	}
	return ""
}
