package stack

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ortel-dev/ortel/test/testenv"
)

// collectorBinary returns the otelcol-ortel built from the manifest, or
// skips (locally) / fails (CI=true) when it has not been built yet.
func collectorBinary(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	out, err := exec.Command(filepath.Join(root, BuildScript), "--path").Output()
	if err != nil {
		t.Fatalf("%s --path: %v", BuildScript, err)
	}
	bin := strings.TrimSpace(string(out))
	if _, err := os.Stat(bin); err != nil {
		msg := "the collector built from " + BuildManifest + " is not in the cache (" + bin + "); build it with " + BuildScript + " (make collector)"
		testenv.Missing(t, "%s", msg)
	}
	return bin
}

func runCollector(t *testing.T, bin string, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestCollectorValidates runs `otelcol-ortel validate` on collector.yaml,
// with its defaults and with the environment docker-compose.yaml sets.
func TestCollectorValidates(t *testing.T) {
	bin := collectorBinary(t)
	cfg := filepath.Join(repoRoot(t), CollectorConfig)
	c, _ := loadRepoCompose(t)
	composeEnv, err := c.Services["otel-collector"].Env()
	if err != nil {
		t.Fatal(err)
	}
	var asCompose []string
	for k, v := range composeEnv {
		asCompose = append(asCompose, k+"="+v)
	}
	tests := []struct {
		name string
		env  []string
	}{
		{"defaults", nil},
		{"compose environment", asCompose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if out, err := runCollector(t, bin, tt.env, "validate", "--config", cfg); err != nil {
				t.Fatalf("otelcol-ortel validate --config %s: %v\n%s", CollectorConfig, err, out)
			}
		})
	}
}

// TestCollectorValidateRejects shows the validation is real: broken copies
// of collector.yaml are refused.
func TestCollectorValidateRejects(t *testing.T) {
	bin := collectorBinary(t)
	orig, err := os.ReadFile(filepath.Join(repoRoot(t), CollectorConfig))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, old, new string }{
		{"undeclared exporter", "exporters: [prometheus, debug]", "exporters: [prometheus, debug, nope]"},
		{"bad endpoint default", "${env:OTELCOL_PROMETHEUS_ENDPOINT:-127.0.0.1:8889}", "${env:OTELCOL_PROMETHEUS_ENDPOINT}"},
		{"unknown setting", "translation_strategy: UnderscoreEscapingWithSuffixes", "translation_strategy: Sideways"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(orig, []byte(tt.old)) {
				t.Fatalf("collector.yaml no longer contains %q; update this test", tt.old)
			}
			p := filepath.Join(t.TempDir(), "collector.yaml")
			if err := os.WriteFile(p, bytes.Replace(orig, []byte(tt.old), []byte(tt.new), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := runCollector(t, bin, []string{"OTELCOL_PROMETHEUS_ENDPOINT="}, "validate", "--config", p)
			if err == nil {
				t.Fatalf("validate accepted a config with %s:\n%s", tt.name, out)
			}
		})
	}
}

// TestCollectorComponents compares the built collector's components with
// the manifest and with ComponentTypes.
func TestCollectorComponents(t *testing.T) {
	bin := collectorBinary(t)
	out, err := runCollector(t, bin, nil, "components")
	if err != nil {
		t.Fatalf("otelcol-ortel components: %v\n%s", err, out)
	}
	var got map[string]yaml.Node
	if err := yaml.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("parse `components` output: %v\n%s", err, out)
	}
	m, err := LoadManifest(filepath.Join(repoRoot(t), BuildManifest))
	if err != nil {
		t.Fatal(err)
	}
	for kind, mods := range m.Components() {
		var want []string
		for _, mod := range mods {
			want = append(want, ComponentTypes[mod.ImportPath()]+" "+mod.GoMod)
		}
		var have []string
		if n, ok := got[kind]; ok {
			var list []struct {
				Name   string `yaml:"name"`
				Module string `yaml:"module"`
			}
			if err := n.Decode(&list); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			for _, c := range list {
				have = append(have, c.Name+" "+c.Module)
			}
		}
		slices.Sort(want)
		slices.Sort(have)
		if !slices.Equal(want, have) {
			t.Errorf("%s: the built collector has %q; the manifest and ComponentTypes say %q", kind, have, want)
		}
	}
}
