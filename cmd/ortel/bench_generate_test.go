package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestBenchGenerateEncoderDecoder drives a decoder laid out as Optimum's
// merged Whisper decoder (use_cache_branch, encoder_hidden_states with a
// symbolic length, decoder and encoder caches) through the command line:
// --encoder-tokens gives the encoder length, and report.json holds the
// cache per step growing by the declared bytes per token.
func TestBenchGenerateEncoderDecoder(t *testing.T) {
	testenv.RequireORT(t)
	model := filepath.Join(t.TempDir(), "decoder_model_merged.onnx")
	cfg := onnxgen.DecoderConfig{Layers: 2, Heads: 2, HeadDim: 8, Vocab: 80, Seed: 3, CrossAttention: true}
	if err := onnxgen.Decoder(cfg).WriteFile(model); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")

	code, stdout, stderr := ortel(t, "bench", model, "--generate", "4", "--out", t.TempDir(), "--quiet", "--profile-runs", "0")
	if code != 1 || !strings.Contains(stdout+stderr, "--encoder-tokens") {
		t.Fatalf("without --encoder-tokens: exit %d, want 1 and a pointer to the flag\n%s%s", code, stdout, stderr)
	}
	for _, bad := range []struct {
		args []string
		says string
	}{
		{[]string{"--generate", "4", "--encoder-tokens", "-3"}, "--encoder-tokens must be"},
		{[]string{"--generate", "4", "--encoder", "enc.onnx", "--encoder-tokens", "3"}, "drop --encoder-tokens"},
		{[]string{"--encoder", "enc.onnx"}, "add --generate N"},
	} {
		code, stdout, stderr = ortel(t, append([]string{"bench", model, "--out", t.TempDir(), "--quiet"}, bad.args...)...)
		if code != 2 || !strings.Contains(stderr, bad.says) {
			t.Errorf("%v: exit %d, want 2 and %q\n%s%s", bad.args, code, bad.says, stdout, stderr)
		}
	}
	code, stdout, stderr = ortel(t, "bench", model, "--generate", "4", "--encoder", filepath.Join(t.TempDir(), "missing.onnx"), "--out", t.TempDir(), "--quiet")
	if code != 1 || !strings.Contains(stderr, "--encoder: model") {
		t.Errorf("a missing encoder: exit %d, want 1\n%s%s", code, stdout, stderr)
	}

	out := t.TempDir()
	code, stdout, stderr = ortel(t, "bench", model, "--generate", "5", "--prompt-tokens", "6", "--encoder-tokens", "20",
		"--runs", "3", "--warmup", "1", "--threads", "1", "--profile-runs", "0", "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	perToken := int64(2 * 2 * 2 * 8 * 4)   // layers × key and value × heads × head size × float32
	cross := int64(2 * 2 * 2 * 8 * 20 * 4) // the same over 20 encoder states
	for _, want := range []string{"time to first token", "time per output token", "more per token", "cross-attention cache of 20 encoder states", "confidence intervals"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Generation
	if g == nil || g.EncoderTokens != 20 || g.KVCacheBytesPerToken != perToken || len(g.KVCacheBytesPerStep) != 5 {
		t.Fatalf("generation %+v", g)
	}
	if g.KVCacheBytesPerStep[0] != 6*perToken+cross {
		t.Errorf("cache after the prefill %d bytes, want %d", g.KVCacheBytesPerStep[0], 6*perToken+cross)
	}
	for i := 1; i < len(g.KVCacheBytesPerStep); i++ {
		if d := g.KVCacheBytesPerStep[i] - g.KVCacheBytesPerStep[i-1]; d != perToken {
			t.Errorf("step %d: grew %d bytes, want %d", i, d, perToken)
		}
	}
	if g.KVCacheBytes != g.KVCacheBytesPerStep[4] || g.TTFT.Count != 3 || g.TPOT.Count != 3 {
		t.Errorf("generation %+v", g)
	}
	var shapes []string
	for _, in := range rep.Model.Inputs {
		if in.Name == "encoder_hidden_states" || in.Name == "use_cache_branch" {
			shapes = append(shapes, in.Name+fmt.Sprint(in.Shape))
		}
	}
	if strings.Join(shapes, " ") != "encoder_hidden_states[1 20 16] use_cache_branch[1]" {
		t.Errorf("report's input shapes %v", shapes)
	}
}

// TestBenchGenerateMoonshine benches the real decoder that scripts/fetch.sh
// decoder fetches, by its catalog name: the catalog's encoder length is the
// default, the flag wins, and the cache grows by what Moonshine tiny's
// declared shapes say (6 layers × key and value × 8 heads × 36 × float32).
func TestBenchGenerateMoonshine(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "moonshine-tiny-decoder_model_merged.onnx")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	const perToken = 6 * 2 * 8 * 36 * 4
	if code, stdout, stderr := ortel(t, "bench", "moonshine-tiny", "--out", t.TempDir(), "--quiet"); code != 2 || !strings.Contains(stderr, "bench it with --generate N") {
		t.Errorf("moonshine-tiny without --generate: exit %d, want 2 and a pointer to --generate\n%s%s", code, stdout, stderr)
	}
	for _, tt := range []struct {
		args    []string
		encoder int
		states  string
	}{
		{nil, 415, "output of encoder moonshine-tiny-encoder_model.onnx on seeded input_values [1 160000]"},
		{[]string{"--encoder-tokens", "40"}, 40, "seeded values"},
	} {
		out := t.TempDir()
		args := append([]string{"bench", "moonshine-tiny", "--generate", "4", "--prompt-tokens", "3", "--runs", "2", "--warmup", "1",
			"--threads", "1", "--profile-runs", "0", "--no-hardware", "--out", out}, tt.args...)
		code, stdout, stderr := ortel(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", tt.args, code, stdout, stderr)
		}
		rep, err := report.Read(filepath.Join(out, "report.json"))
		if err != nil {
			t.Fatal(err)
		}
		g := rep.Generation
		if g == nil || g.Layers != 6 || g.Heads != 8 || g.HeadDim != 36 || g.Vocab != 32768 || g.EncoderTokens != tt.encoder ||
			g.KVCacheBytesPerToken != perToken || len(g.KVCacheBytesPerStep) != 4 || g.TTFT.Count != 2 || g.TPOT.Count != 2 {
			t.Fatalf("%v: generation %+v", tt.args, g)
		}
		if !strings.HasPrefix(g.EncoderStates, tt.states) || !strings.Contains(stdout, "encoder states  "+tt.states) {
			t.Errorf("%v: encoder states %q, want %q in the report and on stdout\n%s", tt.args, g.EncoderStates, tt.states, stdout)
		}
		cross := int64(6 * 2 * 8 * 36 * tt.encoder * 4)
		for i, b := range g.KVCacheBytesPerStep {
			if want := int64(3+i)*perToken + cross; b != want {
				t.Errorf("%v: step %d holds %d bytes of cache, want %d", tt.args, i, b, want)
			}
		}
	}
}
