package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportGenerationFormats runs bench --generate on the synthetic
// decoder, then renders its report.json as Markdown and HTML: both show
// the generation section with a row per token of the KV cache.
func TestReportGenerationFormats(t *testing.T) {
	out, _ := benchSyntheticDecoder(t, 1)
	js := filepath.Join(out, "report.json")
	// 2 layers × (key, value) × 2 heads × 16 × 4 bytes per token: 512 B;
	// after the prefill 8 tokens, after the last 13.
	perStep := []string{"| 1 (prefill) | 4,096 B (4.0 KiB) | - |", "| 6 | 6,656 B (6.5 KiB) | +512 B |"}
	for _, tt := range []struct {
		format string
		want   []string
	}{
		{"md", append([]string{"## Generation", "5 generations of 6 tokens from a 8-token prompt", "| time to first token | 5 |",
			"| time per output token | 5 |", "6.5 KiB after the last token, 512 B more per token"}, perStep...)},
		{"html", []string{`<section id="generation">`, `data-chart="kvcache"`, "<td class=\"l\">time per output token</td><td>5</td>",
			"<td class=\"l\">1 (prefill)</td><td>4,096 B (4.0 KiB)</td>", "<td>&#43;512 B</td>"}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "report."+tt.format)
			if code, stdout, stderr := ortel(t, "report", "--format", tt.format, "--file", file, js); code != 0 {
				t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s report lacks %q", tt.format, w)
				}
			}
			if strings.Contains(string(b), "Encoder states") {
				t.Errorf("%s report of a decoder-only model names encoder states", tt.format)
			}
		})
	}
}
