package stack

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestCollectorConfigWiring(t *testing.T) {
	root := repoRoot(t)
	c, err := LoadCollector(filepath.Join(root, CollectorConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Problems() {
		t.Error(p)
	}
	// The pipelines the issue asks for.
	want := map[string]Pipeline{
		"traces": {
			Receivers:  []string{"otlp"},
			Processors: []string{"memory_limiter", "batch"},
			Exporters:  []string{"otlp_grpc/jaeger", "span_metrics", "debug"},
		},
		"metrics": {
			Receivers:  []string{"otlp", "span_metrics"},
			Processors: []string{"memory_limiter", "batch"},
			Exporters:  []string{"prometheus", "debug"},
		},
	}
	for name, w := range want {
		got, ok := c.Service.Pipelines[name]
		if !ok {
			t.Errorf("no %s pipeline", name)
			continue
		}
		if !slices.Equal(got.Receivers, w.Receivers) || !slices.Equal(got.Processors, w.Processors) || !slices.Equal(got.Exporters, w.Exporters) {
			t.Errorf("pipeline %s = %+v, want %+v", name, got, w)
		}
		// memory_limiter must come first to protect everything after it.
		if len(got.Processors) > 0 && got.Processors[0] != "memory_limiter" {
			t.Errorf("pipeline %s: the first processor is %q; memory_limiter must come first", name, got.Processors[0])
		}
	}
}

var envRefRe = regexp.MustCompile(`\$\{env:([A-Z0-9_]+)(?::-([^}]*))?\}`)

// Every listener defaults to loopback; only an environment variable (set by
// docker-compose.yaml) opens it wider.
func TestCollectorListensOnLoopbackByDefault(t *testing.T) {
	root := repoRoot(t)
	text, err := os.ReadFile(filepath.Join(root, CollectorConfig))
	if err != nil {
		t.Fatal(err)
	}
	listeners := map[string]bool{
		"OTELCOL_GRPC_ENDPOINT": false, "OTELCOL_HTTP_ENDPOINT": false,
		"OTELCOL_PROMETHEUS_ENDPOINT": false, "OTELCOL_TELEMETRY_HOST": false,
		"OTELCOL_HEALTH_ENDPOINT": false,
	}
	for _, m := range envRefRe.FindAllStringSubmatch(string(text), -1) {
		name, def := m[1], m[2]
		if m[0] == "${env:"+name+"}" {
			t.Errorf("${env:%s} has no default: the config would not run without it", name)
		}
		if _, ok := listeners[name]; ok {
			listeners[name] = true
			if !strings.HasPrefix(def, "127.0.0.1") {
				t.Errorf("%s defaults to %q; local listeners bind to 127.0.0.1 by default", name, def)
			}
		}
	}
	for name, seen := range listeners {
		if !seen {
			t.Errorf("collector.yaml does not read %s", name)
		}
	}
	// A bare host-less endpoint (":4317") or 0.0.0.0 would listen everywhere.
	for i, line := range strings.Split(string(text), "\n") {
		if j := strings.Index(line, "#"); j >= 0 {
			line = line[:j] // comments may mention anything
		}
		for _, bad := range []string{"0.0.0.0", "endpoint: :"} {
			if strings.Contains(line, bad) {
				t.Errorf("collector.yaml line %d contains %q", i+1, bad)
			}
		}
	}
}

func TestCollectorProblems(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // substrings, one per expected problem
	}{
		{
			name: "sound",
			yaml: `
receivers: {otlp: {}}
processors: {batch: {}}
exporters: {debug: {}}
connectors: {span_metrics: {}}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [span_metrics]}
    metrics: {receivers: [span_metrics], exporters: [debug]}
`,
		},
		{
			name: "undeclared and unused",
			yaml: `
receivers: {otlp: {}, zipkin: {}}
exporters: {debug: {}}
service:
  pipelines:
    traces: {receivers: [otlp], processors: [batch], exporters: [debug, otlp_grpc/x]}
`,
			want: []string{`processor "batch" is not declared`, `exporter "otlp_grpc/x" is declared neither`, `receivers: "zipkin" is declared but no pipeline uses it`},
		},
		{
			name: "connector on one side only",
			yaml: `
receivers: {otlp: {}}
connectors: {span_metrics: {}}
service:
  pipelines:
    traces: {receivers: [otlp], exporters: [span_metrics]}
`,
			want: []string{`connector "span_metrics" must be an exporter of one pipeline and a receiver of another`},
		},
		{
			name: "bad pipeline",
			yaml: `
receivers: {otlp: {}}
exporters: {debug: {}}
service:
  pipelines:
    spans: {receivers: [otlp, otlp], exporters: [debug]}
    logs: {receivers: [otlp]}
`,
			want: []string{`pipeline "logs" has no exporters`, `pipeline "spans": type must be`, `pipeline "spans" lists ["otlp"] more than once`},
		},
		{
			name: "no pipelines",
			yaml: "receivers: {otlp: {}}\n",
			want: []string{"service.pipelines is empty", `receivers: "otlp" is declared but no pipeline uses it`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.yaml")
			if err := os.WriteFile(p, []byte(tt.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := LoadCollector(p)
			if err != nil {
				t.Fatal(err)
			}
			got := c.Problems()
			if len(got) != len(tt.want) {
				t.Fatalf("Problems() = %q, want %d problems like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestComponentType(t *testing.T) {
	for id, want := range map[string]string{"otlp_grpc/jaeger": "otlp_grpc", "batch": "batch", "a/b/c": "a"} {
		if got := ComponentType(id); got != want {
			t.Errorf("ComponentType(%q) = %q, want %q", id, got, want)
		}
	}
}
