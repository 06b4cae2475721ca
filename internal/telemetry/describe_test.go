package telemetry

import (
	"strings"
	"testing"
)

func TestDescribe(t *testing.T) {
	cert, _ := writeCert(t)
	tests := []struct {
		name    string
		cfg     Config
		env     map[string]string
		want    []string // substrings, each in some line
		notWant []string
	}{
		{
			name: "file mode",
			cfg:  Config{OutputDir: "/tmp/out"},
			want: []string{"mode: file", "traces: appended to /tmp/out/traces.jsonl", "metrics: appended to /tmp/out/metrics.jsonl", "every 10s",
				"service: ortel", "spans: queue of 65536", "shutdown: bounded by 10s"},
			notWant: []string{"warning:"},
		},
		{
			name: "otlp mode",
			cfg:  Config{ServiceName: "bench", ServiceVersion: "0.3.0"},
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://jaeger:4317",
				"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "https://prom:4317",
				"OTEL_EXPORTER_OTLP_CERTIFICATE":      cert,
				"OTEL_EXPORTER_OTLP_HEADERS":          "authorization=x,x-tenant=y",
				"OTEL_EXPORTER_OTLP_COMPRESSION":      "gzip",
				"OTEL_RESOURCE_ATTRIBUTES":            "deployment.environment.name=dev",
				"OTEL_METRIC_EXPORT_INTERVAL":         "60000",
			},
			want: []string{
				"mode: otlp",
				"traces: otlp grpc to jaeger:4317 (plaintext), headers: authorization, x-tenant (values hidden), timeout 10s, compression gzip",
				"metrics: otlp grpc to prom:4317 (TLS, CA " + cert + ")",
				"every 1m",
				"service: bench 0.3.0",
				"resource: deployment.environment.name=dev",
				"warning: traces endpoint jaeger:4317 is plaintext: the certificate files are not used",
			},
		},
		{
			name: "http/protobuf, per-signal exporters, sampler, timeout",
			env: map[string]string{
				"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
				"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example.com/otlp",
				"OTEL_EXPORTER_OTLP_TIMEOUT":  "1500",
				"OTEL_METRICS_EXPORTER":       "none",
				"OTEL_TRACES_SAMPLER":         "traceidratio",
				"OTEL_TRACES_SAMPLER_ARG":     "0.1",
			},
			want: []string{
				"mode: otlp",
				"traces: otlp http/protobuf, POST https://otel.example.com:443/otlp/v1/traces (TLS), headers: none, timeout 1.5s",
				"metrics: not exported (OTEL_METRICS_EXPORTER=none)",
				"sampler: traceidratio 0.1",
				"shutdown: bounded by 2s",
			},
			notWant: []string{"warning:"},
		},
		{
			name: "console",
			env:  map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none"},
			want: []string{"mode: console", "traces: printed on standard output as OTLP/JSON lines (OTEL_TRACES_EXPORTER=console)"},
		},
		{
			name:    "disabled",
			env:     map[string]string{"OTEL_SDK_DISABLED": "true"},
			want:    []string{"mode: disabled"},
			notWant: []string{"spans: queue"},
		},
		{
			name: "warnings listed",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"},
			want: []string{`warning: OTEL_EXPORTER_OTLP_TIMEOUT="soon" ignored`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := resolve(tt.cfg, mapEnv(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			out := strings.Join(r.Describe(), "\n")
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("Describe() lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("Describe() has %q:\n%s", w, out)
				}
			}
		})
	}
}
