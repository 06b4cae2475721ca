package telemetry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// mapEnv is a fake environment for resolve.
func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// writeCert writes a self-signed certificate and its key as PEM files.
func writeCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ortel test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IsCA:         true,
		KeyUsage:     x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func attrValue(attrs []attribute.KeyValue, key string) (string, bool) {
	for _, kv := range attrs {
		if string(kv.Key) == key {
			return kv.Value.String(), true
		}
	}
	return "", false
}

func TestResolveDefaults(t *testing.T) {
	r, err := resolve(Config{}, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"mode", r.Mode, ModeFile},
		{"service", r.ServiceName, "ortel"},
		{"output dir", r.OutputDir, "ortel-out"},
		{"traces file", r.TracesFile(), filepath.Join("ortel-out", "traces.jsonl")},
		{"metrics file", r.MetricsFile(), filepath.Join("ortel-out", "metrics.jsonl")},
		{"metric interval", r.MetricInterval, 10 * time.Second},
		{"metric timeout", r.MetricTimeout, 30 * time.Second},
		{"shutdown timeout", r.ShutdownTimeout, 10 * time.Second},
		{"export timeout", r.Timeout, 10 * time.Second},
		{"compression", r.Compression, "none"},
		{"protocol", r.Protocol, "grpc"},
		{"queue", r.SpanQueueSize, 65536},
		{"batch", r.SpanBatchSize, 512},
		{"schedule delay", r.SpanScheduleDelay, 5 * time.Second},
		{"span export timeout", r.SpanExportTimeout, 30 * time.Second},
		{"no traces endpoint", r.TracesEndpoint, ""},
		{"no metrics endpoint", r.MetricsEndpoint, ""},
		{"warnings", len(r.Warnings), 0},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
	if v, _ := attrValue(r.ResourceAttrs, "service.name"); v != "ortel" {
		t.Errorf("resource service.name = %q", v)
	}
}

func TestResolveEnvironment(t *testing.T) {
	cert, key := writeCert(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name  string
		cfg   Config
		env   map[string]string
		check func(t *testing.T, r Resolved)
		// warnings: substrings, one per expected warning, in order; nil
		// means no warning at all.
		warnings []string
	}{
		// Service and resource.
		{name: "OTEL_SERVICE_NAME", env: map[string]string{"OTEL_SERVICE_NAME": "bench"},
			check: func(t *testing.T, r Resolved) { eq(t, r.ServiceName, "bench") }},
		{name: "OTEL_SERVICE_NAME beats Config.ServiceName", cfg: Config{ServiceName: "cfg"}, env: map[string]string{"OTEL_SERVICE_NAME": "env"},
			check: func(t *testing.T, r Resolved) { eq(t, r.ServiceName, "env") }},
		{name: "service.name attribute beats Config.ServiceName", cfg: Config{ServiceName: "cfg"}, env: map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.name=attr"},
			check: func(t *testing.T, r Resolved) { eq(t, r.ServiceName, "attr") }},
		{name: "Config.ServiceName is the default", cfg: Config{ServiceName: "cfg"},
			check: func(t *testing.T, r Resolved) { eq(t, r.ServiceName, "cfg") }},
		{name: "service.name from OTEL_RESOURCE_ATTRIBUTES", env: map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.name=fromattrs,service.version=9"},
			check: func(t *testing.T, r Resolved) { eq(t, r.ServiceName, "fromattrs"); eq(t, r.ServiceVersion, "9") }},
		{name: "OTEL_SERVICE_NAME beats resource attributes", env: map[string]string{"OTEL_SERVICE_NAME": "svc", "OTEL_RESOURCE_ATTRIBUTES": "service.name=other"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.ServiceName, "svc")
				v, _ := attrValue(r.ResourceAttrs, "service.name")
				eq(t, v, "svc")
			}},
		{name: "Config.ServiceVersion", cfg: Config{ServiceVersion: "1.2.3"}, env: map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "service.version=0.0.1"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.ServiceVersion, "1.2.3")
				v, _ := attrValue(r.ResourceAttrs, "service.version")
				eq(t, v, "1.2.3")
			}},
		{name: "OTEL_RESOURCE_ATTRIBUTES decoded, bad entries skipped",
			env: map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=prod, team = ml%20ops ,justakey,=novalue,bad=%zz,,"},
			check: func(t *testing.T, r Resolved) {
				v, _ := attrValue(r.ResourceAttrs, "deployment.environment.name")
				eq(t, v, "prod")
				v, _ = attrValue(r.ResourceAttrs, "team")
				eq(t, v, "ml ops")
				if _, ok := attrValue(r.ResourceAttrs, "bad"); ok {
					t.Error("kept an attribute with bad percent-encoding")
				}
				eq(t, len(r.ResourceAttrs), 3) // two + service.name
			},
			warnings: []string{`entry 3 "justakey"`, `entry 4 "=novalue"`, "OTEL_RESOURCE_ATTRIBUTES bad ignored"}},

		// Endpoints and schemes.
		{name: "http endpoint is plaintext", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Mode, ModeOTLP)
				eq(t, r.TracesEndpoint, "collector:4317")
				eq(t, r.MetricsEndpoint, "collector:4317")
				eq(t, r.Traces.Insecure, true)
				eq(t, r.Metrics.Insecure, true)
				eq(t, r.Insecure, true)
			}},
		{name: "https endpoint is TLS, the scheme's port", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example.com"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.TracesEndpoint, "otel.example.com:443")
				eq(t, r.Traces.Insecure, false)
				if r.Traces.tls == nil {
					t.Error("no TLS config built")
				}
			}},
		{name: "no scheme is TLS, with a hint for loopback", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4317"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Traces.Insecure, false) },
			warnings: []string{"endpoint 127.0.0.1:4317 has no scheme, so it uses TLS"}},
		{name: "no scheme with INSECURE=true", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4317", "OTEL_EXPORTER_OTLP_INSECURE": "TRUE"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Traces.Insecure, true); eq(t, r.Metrics.Insecure, true) }},
		{name: "no scheme remote host, no hint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "otel.example.com:443"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.TracesEndpoint, "otel.example.com:443")
				eq(t, r.Traces.Insecure, false)
			}},
		{name: "scheme beats INSECURE", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4317", "OTEL_EXPORTER_OTLP_INSECURE": "true"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Traces.Insecure, false) }},
		{name: "signal INSECURE", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:4317", "OTEL_EXPORTER_OTLP_METRICS_INSECURE": "true"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Traces.Insecure, false); eq(t, r.Metrics.Insecure, true) }},
		{name: "IPv6", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://[::1]:4317"},
			check: func(t *testing.T, r Resolved) { eq(t, r.TracesEndpoint, "[::1]:4317") }},
		{name: "URL path ignored", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/v1/traces"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.TracesEndpoint, "c:4318") },
			warnings: []string{`traces endpoint: URL path "/v1/traces" ignored`, `metrics endpoint: URL path`}},
		{name: "credentials in URL ignored and not shown", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:hunter2@c:4317"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.TracesEndpoint, "c:4317") },
			warnings: []string{"credentials in the endpoint URL are ignored", "credentials in the endpoint URL are ignored"}},
		{name: "unsupported scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://c:21"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeFile) },
			warnings: []string{`OTEL_EXPORTER_OTLP_ENDPOINT="ftp://c:21" ignored: scheme "ftp" is not supported`}},
		{name: "bad port", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c:99999"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeFile) },
			warnings: []string{`OTEL_EXPORTER_OTLP_ENDPOINT="c:99999" ignored: port "99999"`}},
		{name: "garbage endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "not a url/at all"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeFile) },
			warnings: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=\"not a url/at all\" ignored"}},
		{name: "signal endpoints override generic", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://generic:4317",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "https://traces:4317",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics:4317",
		}, check: func(t *testing.T, r Resolved) {
			eq(t, r.TracesEndpoint, "traces:4317")
			eq(t, r.Traces.Insecure, false)
			eq(t, r.MetricsEndpoint, "metrics:4317")
			eq(t, r.Metrics.Insecure, true)
			eq(t, r.Insecure, true) // the generic endpoint's
		}},
		{name: "bad signal endpoint falls back to generic", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://generic:4317",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "gopher://x",
		}, check: func(t *testing.T, r Resolved) { eq(t, r.TracesEndpoint, "generic:4317") },
			warnings: []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}},
		{name: "only traces endpoint: metrics to the OTLP default", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://jaeger:4317"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Mode, ModeOTLP)
				eq(t, r.TracesEndpoint, "jaeger:4317")
				eq(t, r.MetricsEndpoint, "localhost:4317")
				eq(t, r.Metrics.Insecure, true)
			},
			warnings: []string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT is not set"}},
		{name: "Config.Endpoint beats environment", cfg: Config{Endpoint: "http://cfg:1234"}, env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://env:4317", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://envtraces:4317",
		}, check: func(t *testing.T, r Resolved) {
			eq(t, r.TracesEndpoint, "cfg:1234")
			eq(t, r.MetricsEndpoint, "cfg:1234")
		}},

		// Headers.
		{name: "headers decoded", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
			"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=Bearer%20tok%3D%3D, x-tenant = acme ,,",
		}, check: func(t *testing.T, r Resolved) {
			eq(t, r.Traces.Headers["authorization"], "Bearer tok==")
			eq(t, r.Traces.Headers["x-tenant"], "acme")
			eq(t, len(r.Metrics.Headers), 2)
			eq(t, len(r.Headers), 2)
		}},
		{name: "signal headers replace generic", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://c:4317",
			"OTEL_EXPORTER_OTLP_HEADERS":         "a=1,b=2",
			"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "c=3",
			"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "",
		}, check: func(t *testing.T, r Resolved) {
			eq(t, strings.Join(r.Traces.Headers.Keys(), ","), "c")
			eq(t, strings.Join(r.Metrics.Headers.Keys(), ","), "a,b")
		}},
		{name: "bad headers skipped", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317",
			"OTEL_EXPORTER_OTLP_HEADERS":  "good=1,novalue,bad key=2,grpc-timeout=3,enc=%G1",
		}, check: func(t *testing.T, r Resolved) { eq(t, strings.Join(r.Headers.Keys(), ","), "good") },
			warnings: []string{"entry 2 ignored: it has no '='", "entry 3 ignored: its key", "entry 4 ignored: its key", "OTEL_EXPORTER_OTLP_HEADERS enc ignored"}},

		// Timeouts, compression, protocol.
		{name: "timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Timeout, 2500*time.Millisecond)
				eq(t, r.Timeout, 2500*time.Millisecond)
			}},
		{name: "signal timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "700"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Timeout, 2500*time.Millisecond)
				eq(t, r.Metrics.Timeout, 700*time.Millisecond)
			}},
		{name: "bad timeouts", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_TIMEOUT": "10s", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "-5"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Timeout, 10*time.Second)
				eq(t, r.Metrics.Timeout, 10*time.Second)
			},
			warnings: []string{`OTEL_EXPORTER_OTLP_TIMEOUT="10s" ignored`, `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="0" ignored`, `OTEL_EXPORTER_OTLP_METRICS_TIMEOUT="-5" ignored`}},
		{name: "gzip", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_COMPRESSION": "GZIP", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION": "none"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Compression, "gzip")
				eq(t, r.Metrics.Compression, "none")
			}},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_COMPRESSION": "brotli"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Traces.Compression, "none") },
			warnings: []string{`OTEL_EXPORTER_OTLP_COMPRESSION="brotli" ignored: want gzip or none`}},
		{name: "protocol grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Protocol, "grpc") }},
		{name: "protocol http/protobuf", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Protocol, ProtocolHTTP)
				eq(t, r.Traces.Protocol, ProtocolHTTP)
				eq(t, r.TracesEndpoint, "c:80")
				eq(t, r.Traces.URLPath, "/v1/traces")
				eq(t, r.Metrics.URLPath, "/v1/metrics")
			}},
		{name: "http generic endpoint path is a prefix", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:443/otlp/"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.TracesEndpoint, "c:443")
				eq(t, r.Traces.URLPath, "/otlp/v1/traces")
				eq(t, r.Metrics.URLPath, "/otlp/v1/metrics")
			}},
		{name: "http signal endpoint used as is", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL":         "http/protobuf",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://t:4318/custom/traces",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m:4318",
		}, check: func(t *testing.T, r Resolved) {
			eq(t, r.Traces.URLPath, "/custom/traces")
			eq(t, r.Metrics.URLPath, "/")
		}, warnings: []string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT has no URL path, so metrics are posted to /"}},
		{name: "signal protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Protocol, ProtocolGRPC)
				eq(t, r.TracesEndpoint, "c:80")
				eq(t, r.Traces.URLPath, "")
				eq(t, r.Metrics.Protocol, ProtocolHTTP)
				eq(t, r.MetricsEndpoint, "c:80")
				eq(t, r.Metrics.URLPath, "/v1/metrics")
			}},
		{name: "http/json for one signal", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Protocol, ProtocolHTTPJSON)
				eq(t, r.Traces.URLPath, "/v1/traces")
				eq(t, r.Metrics.Protocol, ProtocolGRPC)
			}},
		{name: "http/json for both", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "HTTP/JSON"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Protocol, ProtocolHTTPJSON)
				eq(t, r.Metrics.Protocol, ProtocolHTTPJSON)
				eq(t, r.Metrics.URLPath, "/v1/metrics")
			}},
		{name: "a signal URL without a port uses the scheme's, its path as is", env: map[string]string{
			"OTEL_EXPORTER_OTLP_PROTOCOL":         "http/protobuf",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://127.0.0.1/custom/path",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "https://api.example.com"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.TracesEndpoint, "127.0.0.1:80")
				eq(t, r.Traces.URLPath, "/custom/path")
				eq(t, r.MetricsEndpoint, "api.example.com:443")
				eq(t, r.Metrics.URLPath, "/")
			},
			warnings: []string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT has no URL path"}},
		{name: "http default endpoint of the other signal", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:4318/v1/traces"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.MetricsEndpoint, "localhost:4318")
				eq(t, r.Metrics.URLPath, "/v1/metrics")
			},
			warnings: []string{"metrics go to the OTLP default http://localhost:4318"}},

		// Exporters per signal and the sampler.
		{name: "traces none, metrics console", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "Console"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Kind, KindNone)
				eq(t, r.Metrics.Kind, KindConsole)
				eq(t, r.Mode, ModeConsole)
			}},
		{name: "traces none with an endpoint", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Kind, KindNone)
				eq(t, r.TracesEndpoint, "")
				eq(t, r.Metrics.Kind, KindOTLP)
				eq(t, r.Mode, ModeOTLP)
			}},
		{name: "no endpoint: otlp means the file default", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "none"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Kind, KindFile)
				eq(t, r.Metrics.Kind, KindNone)
				eq(t, r.Mode, ModeFile)
			}},
		{name: "both none", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeNone) }},
		{name: "exporter list and unknown exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "console,otlp", "OTEL_METRICS_EXPORTER": "prometheus"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Kind, KindConsole)
				eq(t, r.Metrics.Kind, KindFile)
			},
			warnings: []string{`OTEL_TRACES_EXPORTER="console,otlp": one exporter per signal is built in, so only console is used`, `OTEL_METRICS_EXPORTER="prometheus" ignored: want otlp, console or none`}},
		{name: "default sampler", check: func(t *testing.T, r Resolved) { eq(t, r.Sampler, "parentbased_always_on") }},
		{name: "sampler ratio", env: map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Sampler, "traceidratio 0.25") }},
		{name: "bad sampler and arg", env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Sampler, "parentbased_traceidratio 1") },
			warnings: []string{`OTEL_TRACES_SAMPLER_ARG="2" ignored: want a ratio between 0 and 1`}},
		{name: "unsupported sampler", env: map[string]string{"OTEL_TRACES_SAMPLER": "jaeger_remote"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Sampler, "parentbased_always_on") },
			warnings: []string{`OTEL_TRACES_SAMPLER="jaeger_remote" ignored`}},

		// Export and shutdown timeouts.
		{name: "shutdown bounded by the export timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "1000", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "1500"},
			check: func(t *testing.T, r Resolved) { eq(t, r.ShutdownTimeout, 2*time.Second) }},
		{name: "Config.ExportTimeout beats the environment", cfg: Config{ExportTimeout: 2 * time.Second}, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "1000", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "500"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.Timeout, 2*time.Second)
				eq(t, r.Metrics.Timeout, 2*time.Second)
				eq(t, r.ShutdownTimeout, 2500*time.Millisecond)
			}},
		{name: "file mode keeps the default shutdown bound", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1000"},
			check: func(t *testing.T, r Resolved) { eq(t, r.ShutdownTimeout, DefaultShutdownTimeout) }},
		{name: "bad protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"},
			warnings: []string{`OTEL_EXPORTER_OTLP_PROTOCOL="carrier-pigeon" ignored`}},
		{name: "bad INSECURE", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "c.example:4317", "OTEL_EXPORTER_OTLP_INSECURE": "yes"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Traces.Insecure, false) },
			warnings: []string{`OTEL_EXPORTER_OTLP_INSECURE="yes" ignored: want true or false`}},

		// Certificates.
		{name: "CA and client certificates", env: map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4317", "OTEL_EXPORTER_OTLP_CERTIFICATE": cert,
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": key,
		}, check: func(t *testing.T, r Resolved) {
			eq(t, r.Traces.CertificateFile, cert)
			eq(t, r.Traces.ClientCertFile, cert)
			eq(t, r.Traces.ClientKeyFile, key)
			eq(t, r.CertificateFile, cert)
			if r.Traces.tls == nil || r.Traces.tls.RootCAs == nil || len(r.Traces.tls.Certificates) != 1 {
				t.Errorf("TLS config not built from the files: %+v", r.Traces.tls)
			}
		}},
		{name: "missing CA file", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4317", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": missing},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.Traces.CertificateFile, "")
				eq(t, r.Traces.tls.RootCAs == nil, true)
			},
			warnings: []string{"traces CA certificate ignored, the system's are used: read " + `"` + missing}},
		{name: "CA file not PEM", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4317", "OTEL_EXPORTER_OTLP_CERTIFICATE": notPEM},
			warnings: []string{"traces CA certificate ignored", "metrics CA certificate ignored"}},
		{name: "client certificate without key", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4317", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Traces.ClientCertFile, "") },
			warnings: []string{"traces client certificate ignored: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY must both be set", "metrics client certificate ignored"}},
		{name: "certificate with plaintext endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_CERTIFICATE": cert},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Traces.CertificateFile, "") },
			warnings: []string{"traces endpoint c:4317 is plaintext", "metrics endpoint c:4317 is plaintext"}},
		{name: "certificate without endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": cert},
			warnings: []string{"are set but no endpoint is"}},

		// Metrics reader.
		{name: "metric interval", env: map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "1500", "OTEL_METRIC_EXPORT_TIMEOUT": "800"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.MetricInterval, 1500*time.Millisecond)
				eq(t, r.MetricTimeout, 800*time.Millisecond)
			}},
		{name: "Config.MetricInterval beats env", cfg: Config{MetricInterval: time.Second}, env: map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "1500"},
			check: func(t *testing.T, r Resolved) { eq(t, r.MetricInterval, time.Second) }},
		{name: "bad metric interval", env: map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "fast", "OTEL_METRIC_EXPORT_TIMEOUT": "1e3"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.MetricInterval, 10*time.Second)
				eq(t, r.MetricTimeout, 30*time.Second)
			},
			warnings: []string{`OTEL_METRIC_EXPORT_INTERVAL="fast" ignored`, `OTEL_METRIC_EXPORT_TIMEOUT="1e3" ignored`}},

		// Span batching.
		{name: "BSP settings", env: map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "1000", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "100", "OTEL_BSP_SCHEDULE_DELAY": "250", "OTEL_BSP_EXPORT_TIMEOUT": "4000"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.SpanQueueSize, 1000)
				eq(t, r.SpanBatchSize, 100)
				eq(t, r.SpanScheduleDelay, 250*time.Millisecond)
				eq(t, r.SpanExportTimeout, 4*time.Second)
			}},
		{name: "batch larger than queue", env: map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "512"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.SpanBatchSize, 100) },
			warnings: []string{"OTEL_BSP_MAX_EXPORT_BATCH_SIZE=512 is larger than the span queue (100)"}},
		{name: "bad BSP values", env: map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "0", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "many", "OTEL_BSP_SCHEDULE_DELAY": "-1"},
			check: func(t *testing.T, r Resolved) {
				eq(t, r.SpanQueueSize, DefaultSpanQueueSize)
				eq(t, r.SpanBatchSize, DefaultSpanBatchSize)
				eq(t, r.SpanScheduleDelay, DefaultSpanScheduleDelay)
			},
			warnings: []string{`OTEL_BSP_MAX_QUEUE_SIZE="0" ignored`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE="many" ignored`, `OTEL_BSP_SCHEDULE_DELAY="-1" ignored`}},

		// SDK switch.
		{name: "OTEL_SDK_DISABLED", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeDisabled) }},
		{name: "OTEL_SDK_DISABLED=false", env: map[string]string{"OTEL_SDK_DISABLED": "false"},
			check: func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeFile) }},
		{name: "bad OTEL_SDK_DISABLED", env: map[string]string{"OTEL_SDK_DISABLED": "1"},
			check:    func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeFile) },
			warnings: []string{`OTEL_SDK_DISABLED="1" ignored: want true or false`}},
		{name: "blank values are unset", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "  ", "OTEL_SERVICE_NAME": " "},
			check: func(t *testing.T, r Resolved) { eq(t, r.Mode, ModeFile); eq(t, r.ServiceName, "ortel") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := resolve(tt.cfg, mapEnv(tt.env))
			if err != nil {
				t.Fatalf("resolve failed on an environment value: %v", err)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
			if len(r.Warnings) != len(tt.warnings) {
				t.Fatalf("got %d warnings, want %d:\n%s", len(r.Warnings), len(tt.warnings), strings.Join(r.Warnings, "\n"))
			}
			for i, w := range tt.warnings {
				if !strings.Contains(r.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, r.Warnings[i], w)
				}
			}
			for _, w := range r.Warnings {
				if strings.Contains(w, "hunter2") {
					t.Errorf("warning shows a credential: %q", w)
				}
			}
		})
	}
}

func eq[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestResolveConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
	}{
		{"bad endpoint", Config{Endpoint: "ftp://x"}, `endpoint "ftp://x": scheme "ftp" is not supported`},
		{"bad endpoint with credentials", Config{Endpoint: "ftp://u:hunter2@x"}, "value not shown"},
		{"negative interval", Config{MetricInterval: -time.Second}, "metric interval -1s is negative"},
		{"negative shutdown timeout", Config{ShutdownTimeout: -1}, "shutdown timeout -1ns is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := resolve(tt.cfg, mapEnv(nil))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows a credential: %v", err)
			}
		})
	}
}

// TestResolveReadsProcessEnvironment checks the exported Resolve reads the
// real environment.
func TestResolveReadsProcessEnvironment(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "from-process-env")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	t.Setenv("OTEL_SDK_DISABLED", "")
	r, err := Resolve(Config{})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, r.ServiceName, "from-process-env")
	eq(t, r.TracesEndpoint, "127.0.0.1:4317")
	eq(t, r.Mode, ModeOTLP)
}

func TestEveryVariableIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_INSECURE",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TIMEOUT",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_METRIC_EXPORT_INTERVAL",
		"OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT",
		"OTEL_SDK_DISABLED",
	} {
		if !slices.Contains(strings.Fields(strings.NewReplacer(",", " ").Replace(string(doc))), v) {
			t.Errorf("doc.go does not list %s", v)
		}
	}
}
