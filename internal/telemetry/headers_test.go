package telemetry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const secret = "s3cr3t-t0ken"

// TestHeaderValuesNeverPrinted resolves an environment whose headers hold
// a secret, then prints everything every way a caller might: the secret
// must not appear anywhere, while the header names do.
func TestHeaderValuesNeverPrinted(t *testing.T) {
	env := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":       "https://collector.example:4317",
		"OTEL_EXPORTER_OTLP_HEADERS":        "authorization=Bearer%20" + secret + ",x-tenant=acme",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=" + secret + ",broken" + secret + ",bad key=" + secret + ",enc=%zz" + secret,
	}
	r, err := resolve(Config{}, mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	// The values are there to be used...
	if got := r.Metrics.Headers["authorization"]; got != "Bearer "+secret {
		t.Fatalf("metrics authorization header = %q, want the decoded secret", got)
	}
	if got := r.Traces.Headers["authorization"]; got != secret {
		t.Fatalf("traces authorization header = %q", got)
	}
	// ...but never shown.
	jsonOut, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var slogText, slogJSON bytes.Buffer
	slog.New(slog.NewTextHandler(&slogText, nil)).Info("resolved", "headers", r.Headers, "traces", r.Traces.Headers)
	slog.New(slog.NewJSONHandler(&slogJSON, nil)).Info("resolved", "headers", r.Headers, "resolved", r)
	outputs := map[string]string{
		"Describe":      strings.Join(r.Describe(), "\n"),
		"Warnings":      strings.Join(r.Warnings, "\n"),
		"json":          string(jsonOut),
		"slog text":     slogText.String(),
		"slog json":     slogJSON.String(),
		"Redacted":      r.Headers.Redacted(),
		"headers %v":    fmt.Sprintf("%v", r.Headers),
		"headers %s":    fmt.Sprintf("%s", r.Headers),
		"headers %q":    fmt.Sprintf("%q", r.Headers),
		"headers %x":    fmt.Sprintf("%x", r.Headers),
		"headers %d":    fmt.Sprintf("%d", r.Headers),
		"headers %#v":   fmt.Sprintf("%#v", r.Headers),
		"resolved %v":   fmt.Sprintf("%v", r),
		"resolved %+v":  fmt.Sprintf("%+v", r),
		"resolved %#v":  fmt.Sprintf("%#v", r),
		"exporter %+v":  fmt.Sprintf("%+v", r.Traces),
		"pointer %+v":   fmt.Sprintf("%+v", &r),
		"println":       fmt.Sprintln(r.Traces.Headers, r.Metrics),
		"describe line": r.Traces.describe("traces", ""),
	}
	hexSecret := fmt.Sprintf("%x", secret)
	for name, out := range outputs {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(out, secret) || strings.Contains(out, hexSecret) {
				t.Errorf("the header value appears in %s:\n%s", name, out)
			}
		})
	}
	for _, name := range []string{"Describe", "json", "Redacted", "headers %v", "resolved %+v"} {
		if !strings.Contains(outputs[name], "authorization") {
			t.Errorf("%s does not name the header key:\n%s", name, outputs[name])
		}
	}
	if len(r.Warnings) != 3 {
		t.Errorf("want 3 warnings about the broken trace header entries, got %q", r.Warnings)
	}
}

func TestHeadersRedacted(t *testing.T) {
	tests := []struct {
		h    Headers
		want string
	}{
		{nil, "none"},
		{Headers{}, "none"},
		{Headers{"x-b": "1", "authorization": "2"}, "authorization, x-b"},
	}
	for _, tt := range tests {
		if got := tt.h.Redacted(); got != tt.want {
			t.Errorf("Redacted(%d keys) = %q, want %q", len(tt.h), got, tt.want)
		}
	}
	if got := (Headers{"k": "v"}).String(); got != "map[k:<redacted>]" {
		t.Errorf("String() = %q", got)
	}
}
