package main

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

// realTarball is a package tarball scripts/fetch.sh keeps in the cache's
// .download folder, e.g. ricky0123-vad-web-0.0.31.tgz.
func realTarball(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(ortlib.CacheDir(), ".download", name)
	if _, err := os.Stat(p); err != nil {
		testenv.Missing(t, "needs the real tarball %s (fetched by make setup): %v", p, err)
	}
	return p
}

// TestFetchCommand runs ortel fetch model against a local registry that
// serves real package tarballs: the right one lands the pinned model in an
// empty cache, a second run downloads nothing, and a registry serving
// another tarball under the same name gets a checksum error, exit 1 and an
// untouched cache.
func TestFetchCommand(t *testing.T) {
	vad := realTarball(t, "ricky0123-vad-web-0.0.31.tgz")
	other := realTarball(t, "openwakeword-js-0.1.27.tgz")
	serve := vad
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path != "/@ricky0123/vad-web/-/vad-web-0.0.31.tgz" {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, serve)
	}))
	defer srv.Close()

	cache := t.TempDir()
	t.Setenv("ORTEL_CACHE_DIR", cache)
	code, out, errOut := ortel(t, "fetch", "model", "silero-vad", "--registry", srv.URL)
	model := filepath.Join(cache, "models", "silero_vad_v5.onnx")
	if code != 0 || !strings.Contains(out, model) || !strings.Contains(out, "checksums match their pins") {
		t.Fatalf("fetch model: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "registry from --registry") {
		t.Errorf("stderr does not say where the registry came from:\n%s", errOut)
	}

	code, out, _ = ortel(t, "fetch", "model", "silero-vad", "--registry", srv.URL, "--format", "json")
	var res []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res) != 1 || res[0]["already"] != true || hits != 1 {
		t.Errorf("second fetch: exit %d, %d requests, stdout %s; want already cached, no request", code, hits, out)
	}

	empty := t.TempDir()
	t.Setenv("ORTEL_CACHE_DIR", empty)
	serve = other
	code, _, errOut = ortel(t, "fetch", "model", "silero-vad", "--registry", srv.URL)
	if code != 1 || !strings.Contains(errOut, "checksum mismatch for @ricky0123/vad-web@0.0.31") || !strings.Contains(errOut, "nothing was written") {
		t.Errorf("wrong tarball: exit %d, stderr %s; want 1 and a checksum mismatch", code, errOut)
	}
	filepath.WalkDir(empty, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("after a checksum mismatch the cache holds %s", p)
		}
		return nil
	})
}

func TestFetchUsage(t *testing.T) {
	t.Setenv("ORTEL_CACHE_DIR", t.TempDir())
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fetch"}, "fetch what? ort or model NAME"},
		{[]string{"fetch", "modle"}, "did you mean model?"},
		{[]string{"fetch", "model"}, "name one of"},
		{[]string{"fetch", "model", "sileo-vad"}, "did you mean silero-vad?"},
		{[]string{"fetch", "ort", "--version", "1.20.0"}, "no pinned download (pinned: 1.30.0, 1.24.3)"},
		{[]string{"fetch", "ort", "extra"}, "takes no more arguments"},
	} {
		code, _, errOut := ortel(t, tt.args...)
		if code != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("ortel %s: exit %d, stderr %q; want 2 and %q", strings.Join(tt.args, " "), code, errOut, tt.want)
		}
	}
}
