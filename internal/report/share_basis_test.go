package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
)

// TestTablesNameOneShare: the top-operators table and the roofline table
// of the text, Markdown and HTML reports each name the share they print,
// and it is the same one (self time over all profiled runs), on the real
// PaddleOCR det report.
func TestTablesNameOneShare(t *testing.T) {
	r := realReport(t)
	basis := report.ShareBasis(r.Operators)
	if basis == "" {
		t.Fatal("the fixture has no profiled runs")
	}
	var text, analysisText, md, html bytes.Buffer
	for _, w := range []struct {
		buf   *bytes.Buffer
		write func(*bytes.Buffer, *report.Report) error
	}{
		{&text, func(b *bytes.Buffer, r *report.Report) error { return report.WriteText(b, r) }},
		{&analysisText, func(b *bytes.Buffer, r *report.Report) error { return report.WriteAnalysisText(b, r) }},
		{&md, func(b *bytes.Buffer, r *report.Report) error { return report.WriteMarkdown(b, r) }},
		{&html, func(b *bytes.Buffer, r *report.Report) error { return report.WriteHTML(b, r) }},
	} {
		if err := w.write(w.buf, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, out, table string
		want             int
	}{
		{"text top operators", text.String(), "Top operators", 1},
		{"text roofline", analysisText.String(), "Roofline (", 1},
		{"markdown", md.String(), "", 2},
		{"html", strings.ReplaceAll(html.String(), "&#39;", "'"), "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.out
			if tc.table != "" {
				i := strings.Index(out, tc.table)
				if i < 0 {
					t.Fatalf("no %q table:\n%s", tc.table, out)
				}
				out = out[i:]
				if j := strings.Index(out, "\n\n"); j > 0 {
					out = out[:j]
				}
			}
			if got := strings.Count(out, "hare "+basis); got != tc.want {
				t.Errorf("%q named %d times, want %d:\n%s", "share "+basis, got, tc.want, out)
			}
		})
	}
}
