package main

import (
	"bytes"
	"encoding/base64"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildOrtel builds the ortel binary into a temporary folder: the tests
// that need everything the process prints (the OpenTelemetry and gRPC
// loggers write to the real stderr) run it as a child.
func buildOrtel(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ortel")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// closedPort returns "127.0.0.1:PORT" where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// childEnv is this process's environment without any OTEL_ or GRPC_
// variable, plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OTEL_") && !strings.HasPrefix(kv, "GRPC_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// TestNoCommandPrintsASecret plants a secret in every form an OTLP header
// variable takes — well-formed, malformed (no '='; the OpenTelemetry
// exporters log such an entry with its text), percent-encoded, and in the
// per-signal variables — points the exporters at a closed port so exports
// fail and errors are printed, runs bench, import, agent and doctor as
// child processes, and searches everything they print for the secret:
// raw, in any case, percent-encoded and base64.
func TestNoCommandPrintsASecret(t *testing.T) {
	model := chainModel(t)
	dir := t.TempDir()
	prof := gunzipTo(t, "../../instrument/profile/testdata/cls_2runs.json.gz",
		filepath.Join(dir, "onnxruntime_profile__2026-11-22_10-31-07.json"))
	bin := buildOrtel(t)
	endpoint := "http://" + closedPort(t)

	forms := []struct {
		name, variable, value string
		secrets               []string
	}{
		{"well-formed", "OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer S3cretWellFormed,x-team=ml", []string{"S3cretWellFormed"}},
		{"malformed", "OTEL_EXPORTER_OTLP_HEADERS", "authorization Bearer S3cretMalformed", []string{"S3cretMalformed"}},
		{"percent-encoded", "OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20S3cret%2BEncoded", []string{"S3cret+Encoded", "S3cret%2BEncoded"}},
		{"traces, malformed", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key: S3cretTraces", []string{"S3cretTraces"}},
		{"metrics, malformed", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "x-api-key S3cretMetrics", []string{"S3cretMetrics"}},
		{"metrics, bad key", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "api key=S3cretBadKey", []string{"S3cretBadKey"}},
	}
	commands := []struct {
		name string
		args func(out string) []string
	}{
		{"bench", func(out string) []string {
			return []string{"bench", model, "--runs", "3", "--warmup", "0", "--profile-runs", "1", "--no-hardware", "--out", out}
		}},
		{"import", func(out string) []string { return []string{"import", "--out", out, prof} }},
		{"agent", func(out string) []string {
			return []string{"agent", "--interval", "50ms", "--duration", "150ms", "--out", out}
		}},
		{"doctor", func(string) []string { return []string{"doctor"} }},
	}
	for _, f := range forms {
		for _, c := range commands {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				cmd := exec.Command(bin, c.args(filepath.Join(t.TempDir(), "out"))...)
				cmd.Env = childEnv(
					"OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint,
					"OTEL_EXPORTER_OTLP_TIMEOUT=300",  // fail fast on the closed port
					"GRPC_GO_LOG_SEVERITY_LEVEL=info", // gRPC logs its connection attempts too
					f.variable+"="+f.value,
				)
				var all bytes.Buffer
				cmd.Stdout, cmd.Stderr = &all, &all
				err := cmd.Run()
				if _, exited := err.(*exec.ExitError); err != nil && !exited {
					t.Fatal(err)
				}
				out := all.String()
				if strings.Contains(out, "panic") || strings.Contains(out, "goroutine ") {
					t.Fatalf("panic:\n%s", out)
				}
				if code := cmd.ProcessState.ExitCode(); code == exitUsage {
					t.Fatalf("exit %d (usage):\n%s", code, out)
				}
				for _, s := range f.secrets {
					forms := map[string]bool{}
					for _, form := range []string{
						s, url.QueryEscape(s), url.PathEscape(s),
						base64.StdEncoding.EncodeToString([]byte(s)),
						base64.RawURLEncoding.EncodeToString([]byte(s)),
					} {
						if !forms[form] && strings.Contains(strings.ToLower(out), strings.ToLower(form)) {
							t.Errorf("%s printed the secret of %s as %q:\n%s", c.name, f.variable, form, out)
						}
						forms[form] = true
					}
				}
			})
		}
	}
}
