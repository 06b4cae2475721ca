package ortlib

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// releaseSpec is a release as --ort takes it: 1.24.3 (or 1.24).
var releaseSpec = regexp.MustCompile(`^v?\d+\.\d+(\.\d+)?$`)

// Select finds the library spec names: a library file (any spec that is
// not a release number), or a release such as 1.24.3, looked for in the
// ortel cache ($ORTEL_CACHE_DIR/onnxruntime/<release>/, where
// `ortel fetch ort --version <release>` puts it) and then wherever Locate
// looks. An empty spec is Locate's choice. Nothing is loaded: pass the
// result to Use before Init.
func Select(spec string) (Library, error) {
	if spec == "" {
		return Locate()
	}
	if !releaseSpec.MatchString(spec) {
		return fileLibrary(spec)
	}
	v := spec
	if v[0] == 'v' {
		v = v[1:]
	}
	if _, err := CheckVersion(v); err != nil {
		return Library{}, err
	}
	dir := filepath.Join(CacheDir(), "onnxruntime", v)
	for _, n := range libNames(v) {
		if p := filepath.Join(dir, n); isFile(p) {
			return Library{Path: p, Source: "ortel cache", Version: v}, nil
		}
	}
	for _, pl := range places() {
		for _, c := range pl.find() {
			if c.version == v {
				return Library{Path: c.path, Source: c.source, Version: v}, nil
			}
		}
	}
	return Library{}, fmt.Errorf("ONNX Runtime %s is not in the ortel cache (%s) nor anywhere else ortel looks for it: "+
		"fetch it with: %s --version %s, or give the library file's path", v, dir, FetchHint, v)
}

// fileLibrary checks a library file given by its path.
func fileLibrary(p string) (Library, error) {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return Library{}, fmt.Errorf("ONNX Runtime library %q: no such file (give a library file, or a release such as %s)", p, DefaultVersion)
	case st.IsDir():
		return Library{}, fmt.Errorf("ONNX Runtime library %q is a folder: give the library file in it (e.g. %s)", p, libNames(DefaultVersion)[0])
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	lib := Library{Path: p, Source: "given", Version: versionFromFileName(p)}
	if lib.Version != "" {
		note, err := CheckVersion(lib.Version)
		if err != nil {
			return Library{}, fmt.Errorf("ONNX Runtime library %q: %w", p, err)
		}
		lib.Note = note
	}
	return lib, nil
}

// CachedReleases lists the releases in the ortel cache, newest first, for
// shell completion.
func CachedReleases() []string {
	ents, err := os.ReadDir(filepath.Join(CacheDir(), "onnxruntime"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if _, ok := parseVersion(e.Name()); ok && e.IsDir() {
			out = append(out, e.Name())
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		va, _ := parseVersion(a)
		vb, _ := parseVersion(b)
		return compareVersions(vb, va)
	})
	return out
}

// SameFile says whether two library paths name one file (a link to it
// included): one process can then hold both.
func SameFile(a, b string) bool {
	if a == b {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
