package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// generationReport is a small report of a --generate run: 10 generations,
// so p90 and p99 of TTFT and TPOT cannot be bounded at 95%, and 40 tokens,
// so the per-token KV-cache table is cut in the middle.
func generationReport() *report.Report {
	ttft := make([]float64, 10)
	tpot := make([]float64, 10)
	for i := range ttft {
		ttft[i] = 0.0190 + 0.0011*float64(i)
		tpot[i] = 0.0101 + 0.0003*float64(i)
	}
	const perToken = 13824
	steps := make([]int64, 40)
	for i := range steps {
		steps[i] = 5_736_960 + perToken*int64(i+1)
	}
	lat := stats.Summarize(ttft)
	return &report.Report{
		SchemaVersion: report.SchemaVersion,
		Tool:          report.Tool{Name: "ortel", Version: "test"},
		CreatedAt:     time.Date(2026, 11, 28, 7, 33, 21, 0, time.UTC),
		Host:          report.Host{OS: "linux", Arch: "amd64", CPUModel: "Test CPU", LogicalCPUs: 2},
		Runtime:       report.Runtime{ORTVersion: "1.30.0", Providers: []string{"CPUExecutionProvider"}},
		Model:         report.Model{Name: "decoder", Path: "/models/decoder.onnx", SizeBytes: 1 << 20, SHA256: "00112233445566778899"},
		Latency:       report.Latency{Summary: lat, Samples: ttft},
		Throughput:    report.Throughput{RunsPerS: 6.2, ItemsPerS: 6.2, WallS: 1.6},
		Generation: &report.Generation{Generations: 10, PromptTokens: 4, OutputTokens: 40, Batch: 1,
			Layers: 6, Heads: 8, HeadDim: 36, Vocab: 32768,
			TTFT: stats.Summarize(ttft), TPOT: stats.Summarize(tpot),
			TokensPerS: stats.Summary{P50: 47.125}, DecodeTokensPerS: stats.Summary{P50: 67.25},
			KVCacheBytes: steps[len(steps)-1], KVCacheBytesPerStep: steps, KVCacheBytesPerToken: perToken,
			EncoderTokens: 415, EncoderStates: "output of encoder enc_<model>.onnx on seeded input_values [1 160000] (one run, 260.3ms)"},
	}
}

// moonshineReport wraps the generation section of a real run
// (ortel bench moonshine-tiny --generate 8 --prompt-tokens 4 --runs 10,
// ONNX Runtime 1.30.0) in a minimal report.
func moonshineReport(t *testing.T) *report.Report {
	t.Helper()
	b, err := os.ReadFile("testdata/moonshine_generation.json")
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Model      string             `json:"model"`
		Generation *report.Generation `json:"generation"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	r := generationReport()
	r.Model.Name, r.Generation = fx.Model, fx.Generation
	r.Latency = report.Latency{Summary: stats.Summarize([]float64{0.17, 0.18, 0.16}), Samples: []float64{0.17, 0.18, 0.16}}
	return r
}

func TestWriteGenerationMarkdownGolden(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteMarkdown(&b, generationReport()); err != nil {
		t.Fatal(err)
	}
	golden(t, "generation.md", b.Bytes())
	checkMarkdownTables(t, b.String())
}

// generationFields are strings every format must show for
// generationReport: one per field of the generation section.
var generationFields = []struct{ field, want string }{
	{"generations, tokens, prompt", "10 generations of 40 tokens from a 4-token prompt"},
	{"decoder shape", "6 layers, 8 heads × 36, vocabulary 32768"},
	{"TTFT p50", "23.95ms"},
	{"TTFT min", "19.00ms"},
	{"TTFT max", "28.90ms"},
	{"TPOT p50", "11.45ms"},
	{"TPOT max", "12.80ms"},
	{"TTFT p50 interval", "[20.10ms, 27.80ms]"},
	{"TPOT p50 interval", "[10.40ms, 12.50ms]"},
	{"TTFT p90 insufficient", "at least 25.60ms"},
	{"TPOT p99 insufficient", "at least 12.50ms"},
	{"p99 runs needed", "368"},
	{"tokens/s", "47.1 tokens/s"},
	{"decode tokens/s", "decode 67.2 tokens/s"},
	{"KV cache after the last token", "6.0 MiB after the last token"},
	{"KV cache per token", "13.5 KiB more per token"},
	{"encoder tokens", "415 encoder states"},
	{"encoder states source", "on seeded input"},
	{"first step", "5,750,784 B"},
	{"last step", "6,289,920 B"},
	{"step growth", "+13,824 B"},
	{"steps cut", "… 25 more"},
}

// TestGenerationKPIs: the HTML header shows the TTFT median and tokens/s
// of a --generate run, and nothing of the kind for other runs.
func TestGenerationKPIs(t *testing.T) {
	kpi := func(r *report.Report) string {
		var b bytes.Buffer
		if err := report.WriteHTML(&b, r); err != nil {
			t.Fatal(err)
		}
		h := b.String()
		return h[strings.Index(h, `<div class="kpis">`):strings.Index(h, "</header>")]
	}
	got := kpi(generationReport())
	for _, want := range []string{`<div class="v">23.95ms</div><div class="k">time to first token p50</div>`, `<div class="v">47.1</div><div class="k">tokens/s p50</div>`} {
		if !strings.Contains(got, want) {
			t.Errorf("header lacks %s:\n%s", want, got)
		}
	}
	r := generationReport()
	r.Generation = nil
	if got := kpi(r); strings.Contains(got, "token") {
		t.Errorf("header of a run without generation: %s", got)
	}
}

// TestGenerationInEveryFormat: each field of the generation section is in
// the Markdown, the HTML and the text report.
func TestGenerationInEveryFormat(t *testing.T) {
	r := generationReport()
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
		skip  map[string]bool // fields the format shows otherwise
	}{
		{"markdown", func(b *bytes.Buffer) error { return report.WriteMarkdown(b, r) }, nil},
		{"html", func(b *bytes.Buffer) error { return report.WriteHTML(b, r) }, nil},
		// The text report prints the interval rows in its own words.
		{"text", func(b *bytes.Buffer) error { return report.WriteText(b, r) },
			map[string]bool{"TTFT p50 interval": true, "TPOT p50 interval": true}},
	} {
		t.Run(f.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := f.write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if f.name == "html" {
				// Only the rendered page, not the report JSON in it.
				out = out[:strings.Index(out, `<script id="ortel-data"`)]
				out = strings.ReplaceAll(out, "&lt;", "<")
				out = strings.NewReplacer("&gt;", ">", "&#43;", "+").Replace(out)
			}
			if f.name == "markdown" {
				out = strings.NewReplacer(`\_`, "_", "&lt;", "<", "&gt;", ">").Replace(out)
			}
			for _, fl := range generationFields {
				if !f.skip[fl.field] && !strings.Contains(out, fl.want) {
					t.Errorf("%s: %s (%q) not rendered", f.name, fl.field, fl.want)
				}
			}
		})
	}
}

// TestGenerationInsufficientRunsMarked: the percentile rows print — for
// the percentiles 10 generations cannot support, never the interpolated
// value, in every format.
func TestGenerationInsufficientRunsMarked(t *testing.T) {
	r := generationReport()
	interpolated := []string{ // p90 and p99 of TTFT and TPOT, as dur prints them
		"27.91ms", "28.80ms", "12.53ms", "12.77ms",
	}
	check := func(name, out string, rowPrefix string) {
		for _, line := range strings.Split(out, "\n") {
			if !strings.Contains(line, rowPrefix) {
				continue
			}
			for _, v := range interpolated {
				if strings.Contains(line, v) {
					t.Errorf("%s prints the unsupported percentile %s as measured: %s", name, v, line)
				}
			}
		}
	}
	var md, txt, html bytes.Buffer
	if err := report.WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	check("markdown", md.String(), "| time ")
	check("text", txt.String(), "time ")
	check("html", strings.ReplaceAll(html.String(), "<tr>", "\n<tr>"), "<td class=\"l\">time ")
	if !strings.Contains(md.String(), "| time to first token | 10 | 19.00ms | 23.95ms | — | — | 28.90ms |") {
		t.Errorf("markdown TTFT row lacks the — marks:\n%s", md.String())
	}
}

// TestGenerationSectionEdges: a report without generation has no section;
// one token (no TPOT), no intervals (an older report) and a decoder-only
// model drop only their own lines.
func TestGenerationSectionEdges(t *testing.T) {
	render := func(r *report.Report) (string, string) {
		var md, html bytes.Buffer
		if err := report.WriteMarkdown(&md, r); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteHTML(&html, r); err != nil {
			t.Fatal(err)
		}
		h := html.String()
		return md.String(), h[:strings.Index(h, `<script id="ortel-data"`)]
	}
	r := generationReport()
	r.Generation = nil
	md, html := render(r)
	if strings.Contains(md, "## Generation") || strings.Contains(html, `id="generation"`) {
		t.Error("a report without generation shows a generation section")
	}

	r = generationReport()
	g := r.Generation
	g.OutputTokens, g.TPOT, g.KVCacheBytesPerStep = 1, stats.Summary{}, g.KVCacheBytesPerStep[:1]
	g.EncoderTokens, g.EncoderStates = 0, ""
	for _, s := range []*stats.Summary{&g.TTFT} {
		s.Intervals = nil
	}
	md, html = render(r)
	for name, out := range map[string]string{"markdown": md, "html": html} {
		for _, want := range []string{"1 token from", "time to first token", "5,750,784 B"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
		for _, not := range []string{"time per output token", "confidence interval", "encoder", "… "} {
			if strings.Contains(out, not) {
				t.Errorf("%s has %q", name, not)
			}
		}
	}
	// Without intervals nothing is marked unsupported.
	if !strings.Contains(md, "| time to first token | 10 | 19.00ms | 23.95ms | 27.91ms | 28.80ms | 28.90ms |") {
		t.Errorf("markdown row of a report without intervals:\n%s", md)
	}
}

// TestGenerationHTMLRendersInChromium draws the KV-cache chart of the real
// moonshine-tiny run and of the synthetic report in headless Chromium.
func TestGenerationHTMLRendersInChromium(t *testing.T) {
	browser := chromium(t)
	for name, r := range map[string]*report.Report{"moonshine-tiny": moonshineReport(t), "synthetic": generationReport()} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := report.WriteHTML(&b, r); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(t.TempDir(), "report.html")
			if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			dom, log := dumpDOM(t, browser, page)
			checkRendered(t, dom, log, []string{"latency-hist", "latency-cdf", "kvcache"})
			for _, tag := range figureRe.FindAllString(dom, -1) {
				if a := attrs(tag); a["data-chart"] == "kvcache" && a["data-ok"] != itoa(len(r.Generation.KVCacheBytesPerStep)) {
					t.Errorf("kvcache chart drew %s points for %d steps", a["data-ok"], len(r.Generation.KVCacheBytesPerStep))
				}
			}
			if !strings.Contains(dom, `<section id="generation">`) || !strings.Contains(dom, "after token") {
				t.Error("the page lacks the generation section")
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestMoonshineGenerationRendered: the real run's section, in Markdown.
func TestMoonshineGenerationRendered(t *testing.T) {
	r := moonshineReport(t)
	var b bytes.Buffer
	if err := report.WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"10 generations of 8 tokens from a 4-token prompt",
		"| time to first token | 10 | 19.13ms | 38.87ms | — | — | 128.14ms |",
		"| time per output token | [10.76ms, 20.37ms] |",
		"5.6 MiB after the last token, 13.5 KiB more per token (with the cross-attention cache of 415 encoder states)",
		`Encoder states: output of encoder moonshine-tiny-encoder\_model.onnx on seeded input\_values [1 160000]`,
		"| 1 (prefill) | 5,792,256 B (5.5 MiB) | - |",
		"| 8 | 5,889,024 B (5.6 MiB) | +13,824 B (13.5 KiB) |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}

// TestHTMLLatencyRowMarksInsufficientPercentiles: the HTML latency row, like
// the text and Markdown ones, prints — for what 10 runs cannot support.
func TestHTMLLatencyRowMarksInsufficientPercentiles(t *testing.T) {
	var b bytes.Buffer
	if err := report.WriteHTML(&b, generationReport()); err != nil {
		t.Fatal(err)
	}
	want := "<td>23.95ms</td><td>—</td><td>—</td><td>—</td><td>—</td><td>28.90ms</td></tr>"
	if !strings.Contains(b.String(), want) {
		t.Errorf("HTML latency row lacks %s", want)
	}
}

// TestGenerationCSVSummary: the CSV summary has the generation scalars,
// with an empty cell for a percentile the runs cannot support.
func TestGenerationCSVSummary(t *testing.T) {
	g := generationReport().Generation
	fmtG := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var b bytes.Buffer
	if err := report.WriteCSV(&b, generationReport(), report.CSVSummary); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range rows {
		if len(r) != 4 {
			t.Fatalf("row %v: want 4 cells", r)
		}
		if r[0] == "generation" {
			got[r[1]] = r[2:]
		}
	}
	for name, want := range map[string][]string{
		"generations":              {"10", "{generation}"},
		"ttft_p50":                 {"0.02395", "s"},
		"ttft_p50_lower":           {"0.0201", "s"},
		"ttft_p90":                 {"", "s"},
		"ttft_p90_lower":           {fmtG(*g.TTFT.Intervals[1].Lower), "s"},
		"ttft_p90_upper":           {"", "s"},
		"tpot_max":                 {fmtG(g.TPOT.Max), "s"},
		"tokens_per_s_p50":         {"47.125", "{token}/s"},
		"kv_cache_bytes":           {"6289920", "By"},
		"kv_cache_bytes_per_token": {"13824", "By"},
		"encoder_tokens":           {"415", "{token}"},
		"encoder_states":           {g.EncoderStates, ""},
	} {
		if g, ok := got[name]; !ok || g[0] != want[0] || g[1] != want[1] {
			t.Errorf("generation,%s = %v, want %v", name, g, want)
		}
	}
	r := generationReport()
	r.Generation = nil
	b.Reset()
	if err := report.WriteCSV(&b, r, report.CSVSummary); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "generation,") {
		t.Error("a run without generation has generation rows")
	}
}
