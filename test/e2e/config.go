package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/ortel-dev/ortel/test/stack"
)

// CollectorPorts are the loopback ports the collector listens on.
type CollectorPorts struct {
	GRPC, HTTP, Prometheus, Telemetry, Health int
}

// CollectorEnv returns the environment that points collector.yaml's
// listeners at ports (on 127.0.0.1) and its Jaeger exporter at
// jaegerEndpoint, with span metrics flushed every second so the test does
// not wait for the default interval.
func CollectorEnv(p CollectorPorts, jaegerEndpoint string) []string {
	addr := func(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
	return []string{
		"OTELCOL_GRPC_ENDPOINT=" + addr(p.GRPC),
		"OTELCOL_HTTP_ENDPOINT=" + addr(p.HTTP),
		"OTELCOL_PROMETHEUS_ENDPOINT=" + addr(p.Prometheus),
		"OTELCOL_TELEMETRY_HOST=127.0.0.1",
		"OTELCOL_TELEMETRY_PORT=" + strconv.Itoa(p.Telemetry),
		"OTELCOL_HEALTH_ENDPOINT=" + addr(p.Health),
		"OTELCOL_JAEGER_ENDPOINT=" + jaegerEndpoint,
		"OTELCOL_SPANMETRICS_FLUSH_INTERVAL=1s",
		"OTELCOL_DEBUG_VERBOSITY=basic",
	}
}

// TestExporter is the id of the exporter the overlay adds.
const TestExporter = "otlp_grpc/e2e"

// CollectorOverlay returns a configuration to load after collector.yaml
// (--config collector.yaml --config overlay.yaml): it declares a second
// OTLP gRPC exporter to endpoint (plaintext) and appends it to the
// exporters of every traces pipeline of base. Lists replace lists when the
// collector merges configs, so the overlay repeats base's exporters.
func CollectorOverlay(base *stack.Collector, endpoint string) ([]byte, error) {
	type exporter struct {
		Endpoint string `yaml:"endpoint"`
		TLS      struct {
			Insecure bool `yaml:"insecure"`
		} `yaml:"tls"`
	}
	type pipeline struct {
		Exporters []string `yaml:"exporters"`
	}
	var overlay struct {
		Exporters map[string]exporter `yaml:"exporters"`
		Service   struct {
			Pipelines map[string]pipeline `yaml:"pipelines"`
		} `yaml:"service"`
	}
	e := exporter{Endpoint: endpoint}
	e.TLS.Insecure = true
	overlay.Exporters = map[string]exporter{TestExporter: e}
	overlay.Service.Pipelines = map[string]pipeline{}
	for name, p := range base.Service.Pipelines {
		if stack.ComponentType(name) != "traces" {
			continue
		}
		if slices.Contains(p.Exporters, TestExporter) {
			return nil, fmt.Errorf("pipeline %s already has an exporter %s", name, TestExporter)
		}
		overlay.Service.Pipelines[name] = pipeline{Exporters: append(slices.Clone(p.Exporters), TestExporter)}
	}
	if len(overlay.Service.Pipelines) == 0 {
		return nil, fmt.Errorf("the collector config has no traces pipeline to tap")
	}
	return yaml.Marshal(overlay)
}

// PrometheusConfig rewrites a Prometheus configuration for a native test
// run: every scrape job's targets become the address targets names for it,
// and the scrape and evaluation intervals become interval (e.g. "1s"). A
// job without an address, or an address for a job the file lacks, is an
// error, so the harness and prometheus.yml stay in step.
func PrometheusConfig(base []byte, targets map[string]string, interval string) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(base, &cfg); err != nil {
		return nil, fmt.Errorf("parse the Prometheus config: %w", err)
	}
	if cfg == nil {
		return nil, fmt.Errorf("the Prometheus config is empty")
	}
	global, _ := cfg["global"].(map[string]any)
	if global == nil {
		global = map[string]any{}
	}
	global["scrape_interval"] = interval
	global["scrape_timeout"] = interval
	global["evaluation_interval"] = interval
	cfg["global"] = global

	jobs, ok := cfg["scrape_configs"].([]any)
	if !ok || len(jobs) == 0 {
		return nil, fmt.Errorf("the Prometheus config has no scrape_configs")
	}
	used := map[string]bool{}
	for i, j := range jobs {
		job, ok := j.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("scrape_configs[%d] is not a mapping", i)
		}
		name, _ := job["job_name"].(string)
		addr, ok := targets[name]
		if !ok {
			return nil, fmt.Errorf("scrape job %q of the Prometheus config has no test address; add it to the e2e harness", name)
		}
		used[name] = true
		delete(job, "scrape_interval")
		delete(job, "scrape_timeout")
		job["static_configs"] = []any{map[string]any{"targets": []any{addr}}}
	}
	for name := range targets {
		if !used[name] {
			return nil, fmt.Errorf("the Prometheus config has no scrape job %q", name)
		}
	}
	return yaml.Marshal(cfg)
}

// AbsRuleFiles rewrites the relative rule_files of a Prometheus
// configuration to absolute paths under dir (the folder of the file they
// were written for), so the configuration can be written elsewhere.
func AbsRuleFiles(cfg []byte, dir string) ([]byte, error) {
	var m map[string]any
	if err := yaml.Unmarshal(cfg, &m); err != nil {
		return nil, fmt.Errorf("parse the Prometheus config: %w", err)
	}
	files, ok := m["rule_files"].([]any)
	if !ok {
		return cfg, nil
	}
	for i, f := range files {
		s, ok := f.(string)
		if !ok {
			return nil, fmt.Errorf("rule_files[%d] is %v, not a path", i, f)
		}
		if !filepath.IsAbs(s) {
			files[i] = filepath.Join(dir, s)
		}
	}
	return yaml.Marshal(m)
}
