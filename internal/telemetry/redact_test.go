package telemetry

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// secretForms are the forms a secret may be printed in.
func secretForms(s string) []string {
	return []string{
		s, strings.ToLower(s), strings.ToUpper(s),
		url.QueryEscape(s), url.PathEscape(s),
		base64.StdEncoding.EncodeToString([]byte(s)),
		base64.RawURLEncoding.EncodeToString([]byte(s)),
		fmt.Sprintf("%q", s),
	}
}

func TestRedactorFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		secrets []string // each must be hidden in every form
		keep    []string // must still be printed
	}{
		{"well-formed", []string{"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer S3cretWF1,x-team=ml"},
			[]string{"S3cretWF1", "Bearer S3cretWF1"}, []string{"authorization", "Bearer", "x-team"}},
		{"malformed, no =", []string{"OTEL_EXPORTER_OTLP_HEADERS=authorization Bearer S3cretMF2"},
			[]string{"S3cretMF2", "authorization Bearer S3cretMF2"}, []string{"Bearer", "authorization"}},
		{"malformed, colon", []string{"OTEL_EXPORTER_OTLP_HEADERS=authorization: S3cretCO3"},
			[]string{"S3cretCO3"}, []string{"authorization"}},
		{"percent-encoded", []string{"OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20S3cret%2FPE4"},
			[]string{"S3cret/PE4", "Bearer%20S3cret%2FPE4"}, nil},
		{"bad key", []string{"OTEL_EXPORTER_OTLP_HEADERS=api key=S3cretBK5"},
			[]string{"S3cretBK5", "api key=S3cretBK5"}, nil},
		{"traces", []string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS=x-api-key=S3cretTR6"}, []string{"S3cretTR6"}, nil},
		{"metrics", []string{"OTEL_EXPORTER_OTLP_METRICS_HEADERS=x-api-key S3cretME7"}, []string{"S3cretME7"}, nil},
		{"logs", []string{"OTEL_EXPORTER_OTLP_LOGS_HEADERS=k=S3cretLG8"}, []string{"S3cretLG8"}, nil},
		{"endpoint password", []string{"OTEL_EXPORTER_OTLP_ENDPOINT=https://user:S3cretPW9@collector:4317"},
			[]string{"S3cretPW9"}, []string{"collector:4317"}},
		{"other variables are not secrets", []string{"OTEL_SERVICE_NAME=S3cretNo", "HOME=/root"}, nil, []string{"S3cretNo"}},
		{"short values are kept", []string{"OTEL_EXPORTER_OTLP_HEADERS=k=abc"}, nil, []string{"abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := RedactorFromEnv(tt.env)
			for _, s := range tt.secrets {
				for _, f := range secretForms(s) {
					line := "export failed: input=" + f + " (at the end)"
					got := r.Redact(line)
					if strings.Contains(strings.ToLower(got), strings.ToLower(s)) || strings.Contains(got, f) {
						t.Errorf("Redact(%q) = %q: the secret is still there", line, got)
					}
					if !strings.HasPrefix(got, "export failed: input=") || !strings.HasSuffix(got, " (at the end)") {
						t.Errorf("Redact(%q) = %q: more than the secret was removed", line, got)
					}
				}
			}
			for _, k := range tt.keep {
				if got := r.Redact("x " + k + " y"); got != "x "+k+" y" {
					t.Errorf("Redact hid %q, which is no secret: %q", k, got)
				}
			}
			if tt.secrets == nil && !r.Empty() {
				// Only the short value case may collect (and ignore) values.
				if got := r.Redact("abc S3cretNo"); got != "abc S3cretNo" {
					t.Errorf("Redact changed text without secrets: %q", got)
				}
			}
		})
	}
}

func TestRedactorWriter(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor("S3cretWR")
	w := r.Writer(&buf)
	if r.Writer(w) != w {
		t.Error("wrapping a redacting writer twice")
	}
	n, err := fmt.Fprintf(w, "token S3CRETWR here\n")
	if err != nil || n != len("token S3CRETWR here\n") {
		t.Errorf("Write = %d, %v: want the input's length", n, err)
	}
	if buf.String() != "token <redacted> here\n" {
		t.Errorf("wrote %q", buf.String())
	}
	var nilR *Redactor
	if nilR.Writer(&buf) != &buf || nilR.Redact("x") != "x" {
		t.Error("a nil Redactor must pass text through")
	}
}

func FuzzRedactorFromEnv(f *testing.F) {
	f.Add("authorization Bearer S3CRET", "log: authorization Bearer S3CRET")
	f.Add("a=b%20c,d e,=,,%zz", "b c d e")
	f.Fuzz(func(t *testing.T, headers, text string) {
		r := RedactorFromEnv([]string{"OTEL_EXPORTER_OTLP_HEADERS=" + headers})
		got := r.Redact(text)
		for _, n := range r.needles {
			// A needle with '<' or '>' may be formed anew where a
			// replacement meets the text around it; one inside the marker
			// is the marker itself. Any other must be gone.
			if strings.ContainsAny(n, "<>") || strings.Contains(redacted, n) {
				continue
			}
			if strings.Contains(asciiLower(got), n) {
				t.Fatalf("Redact(%q) = %q still holds %q", text, got, n)
			}
		}
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("Redact broke UTF-8: %q -> %q", text, got)
		}
	})
}
