package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ortel-dev/ortel/test/stack"
)

func repoFile(t *testing.T, rel string) string {
	t.Helper()
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, rel)
}

func TestCollectorOverlay(t *testing.T) {
	base, err := stack.LoadCollector(repoFile(t, stack.CollectorConfig))
	if err != nil {
		t.Fatal(err)
	}
	b, err := CollectorOverlay(base, "127.0.0.1:5555")
	if err != nil {
		t.Fatal(err)
	}
	// Merge the way the collector does (maps merge, lists replace) and check
	// the result is sound and sends traces to both places.
	var merged stack.Collector
	if err := yaml.Unmarshal(mustRead(t, repoFile(t, stack.CollectorConfig)), &merged); err != nil {
		t.Fatal(err)
	}
	var over stack.Collector
	if err := yaml.Unmarshal(b, &over); err != nil {
		t.Fatalf("overlay is not YAML: %v\n%s", err, b)
	}
	for id, n := range over.Exporters {
		merged.Exporters[id] = n
	}
	for name, p := range over.Service.Pipelines {
		mp := merged.Service.Pipelines[name]
		mp.Exporters = p.Exporters
		merged.Service.Pipelines[name] = mp
	}
	if probs := merged.Problems(); len(probs) > 0 {
		t.Errorf("collector.yaml + overlay: %q", probs)
	}
	traces := merged.Service.Pipelines["traces"].Exporters
	for _, want := range append(base.Service.Pipelines["traces"].Exporters, TestExporter) {
		if !slices.Contains(traces, want) {
			t.Errorf("traces exporters %q lack %q", traces, want)
		}
	}
	if !strings.Contains(string(b), "endpoint: 127.0.0.1:5555") || !strings.Contains(string(b), "insecure: true") {
		t.Errorf("overlay does not send to the test receiver in plaintext:\n%s", b)
	}
	if _, ok := over.Service.Pipelines["metrics"]; ok {
		t.Error("the overlay must not touch the metrics pipeline")
	}
}

func TestCollectorOverlayErrors(t *testing.T) {
	tests := []struct {
		name string
		base stack.Collector
	}{
		{"no traces pipeline", stack.Collector{}},
	}
	tapped := stack.Collector{}
	tapped.Service.Pipelines = map[string]stack.Pipeline{"traces": {Exporters: []string{TestExporter}}}
	tests = append(tests, struct {
		name string
		base stack.Collector
	}{"already tapped", tapped})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := CollectorOverlay(&tt.base, "x:1"); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func TestCollectorEnvCoversTheConfig(t *testing.T) {
	text := string(mustRead(t, repoFile(t, stack.CollectorConfig)))
	env := CollectorEnv(CollectorPorts{GRPC: 1, HTTP: 2, Prometheus: 3, Telemetry: 4, Health: 5}, "127.0.0.1:9")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.Contains(text, "${env:"+k+":-") {
			t.Errorf("%s is not read by collector.yaml", k)
		}
		if strings.Contains(v, "0.0.0.0") {
			t.Errorf("%s=%s: the test binds to loopback only", k, v)
		}
	}
	// Every listener of the config is moved off its default port, so the
	// test never collides with a collector already running here.
	for _, k := range []string{"OTELCOL_GRPC_ENDPOINT", "OTELCOL_HTTP_ENDPOINT", "OTELCOL_PROMETHEUS_ENDPOINT", "OTELCOL_TELEMETRY_PORT", "OTELCOL_HEALTH_ENDPOINT", "OTELCOL_JAEGER_ENDPOINT"} {
		if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") }) {
			t.Errorf("CollectorEnv does not set %s", k)
		}
	}
}

func TestPrometheusConfig(t *testing.T) {
	base := mustRead(t, repoFile(t, stack.PrometheusConfig))
	targets := map[string]string{"otelcol": "127.0.0.1:1001", "otelcol-internal": "127.0.0.1:1002"}
	b, err := PrometheusConfig(base, targets, "1s")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Global        map[string]string `yaml:"global"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			HonorLabels   bool   `yaml:"honor_labels"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Global["scrape_interval"] != "1s" || cfg.Global["scrape_timeout"] != "1s" {
		t.Errorf("global = %v", cfg.Global)
	}
	for _, sc := range cfg.ScrapeConfigs {
		if len(sc.StaticConfigs) != 1 || !slices.Equal(sc.StaticConfigs[0].Targets, []string{targets[sc.JobName]}) {
			t.Errorf("job %s targets %v, want %s", sc.JobName, sc.StaticConfigs, targets[sc.JobName])
		}
		if sc.JobName == "otelcol" && !sc.HonorLabels {
			t.Error("the otelcol job lost honor_labels")
		}
	}

	tests := []struct {
		name    string
		base    string
		targets map[string]string
	}{
		{"unknown job", string(base), map[string]string{"otelcol": "a:1"}},
		{"missing job", string(base), map[string]string{"otelcol": "a:1", "otelcol-internal": "a:2", "agent": "a:3"}},
		{"no jobs", "global: {}\n", targets},
		{"empty", "", targets},
		{"not yaml", "scrape_configs: [", targets},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := PrometheusConfig([]byte(tt.base), tt.targets, "1s"); err == nil {
				t.Error("want an error")
			}
		})
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAbsRuleFiles(t *testing.T) {
	in := []byte("global: {}\nrule_files:\n  - rules/*.yaml\n  - /abs/x.yaml\n")
	out, err := AbsRuleFiles(in, "/repo/otelcol-config")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"/repo/otelcol-config/rules/*.yaml", "/abs/x.yaml"}
	if !slices.Equal(got.RuleFiles, want) {
		t.Errorf("rule_files = %q, want %q", got.RuleFiles, want)
	}
	if _, err := AbsRuleFiles([]byte("rule_files: [3]\n"), "/d"); err == nil {
		t.Error("a rule file that is not a path: want an error")
	}
}
