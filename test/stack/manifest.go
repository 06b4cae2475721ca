package stack

import (
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// Manifest is a collector builder manifest (otelcol-config/builder-config.yaml).
type Manifest struct {
	Dist struct {
		Name    string `yaml:"name"`
		Module  string `yaml:"module"`
		Version string `yaml:"version"`
	} `yaml:"dist"`
	Receivers  []Module `yaml:"receivers"`
	Processors []Module `yaml:"processors"`
	Exporters  []Module `yaml:"exporters"`
	Connectors []Module `yaml:"connectors"`
	Extensions []Module `yaml:"extensions"`
	Providers  []Module `yaml:"providers"`
	Telemetry  Module   `yaml:"telemetry"`
}

// Module is one Go module entry of a manifest: "gomod" is "path version".
type Module struct {
	GoMod  string `yaml:"gomod"`
	Import string `yaml:"import"`
	Name   string `yaml:"name"`
	Path   string `yaml:"path"`
}

// ModulePath returns the Go module path of the entry.
func (m Module) ModulePath() string {
	p, _, _ := strings.Cut(strings.TrimSpace(m.GoMod), " ")
	return p
}

// Version returns the module version of the entry ("" when missing).
func (m Module) Version() string {
	_, v, _ := strings.Cut(strings.TrimSpace(m.GoMod), " ")
	return strings.TrimSpace(v)
}

// ImportPath returns the package the builder imports for the entry.
func (m Module) ImportPath() string {
	if m.Import != "" {
		return m.Import
	}
	return m.ModulePath()
}

// LoadManifest reads and parses a collector builder manifest.
func LoadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read collector build manifest: %w", err)
	}
	var m Manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("parse collector build manifest %q: %w", path, err)
	}
	return &m, nil
}

// Components returns the manifest's component modules by kind.
func (m *Manifest) Components() map[string][]Module {
	return map[string][]Module{
		"receivers":  m.Receivers,
		"processors": m.Processors,
		"exporters":  m.Exporters,
		"connectors": m.Connectors,
		"extensions": m.Extensions,
	}
}

// ComponentTypes maps the import path of a collector component to the type
// name its factory registers in collector v0.155.0 (what `otelcol-ortel
// components` prints). Type names are not derivable from import paths (the
// otlpexporter registers otlp_grpc), so each component the manifest may
// list is named here; a test compares the table with the built collector.
var ComponentTypes = map[string]string{
	"go.opentelemetry.io/collector/receiver/otlpreceiver":                                      "otlp",
	"go.opentelemetry.io/collector/processor/batchprocessor":                                   "batch",
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor":                           "memory_limiter",
	"go.opentelemetry.io/collector/exporter/otlpexporter":                                      "otlp_grpc",
	"go.opentelemetry.io/collector/exporter/debugexporter":                                     "debug",
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter":    "prometheus",
	"github.com/open-telemetry/opentelemetry-collector-contrib/connector/spanmetricsconnector": "span_metrics",
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension": "health_check",
}

// Types returns, per kind, the sorted component types the manifest builds,
// or an error naming a module missing from ComponentTypes.
func (m *Manifest) Types() (map[string][]string, error) {
	out := map[string][]string{}
	for kind, mods := range m.Components() {
		set := map[string]bool{}
		for _, mod := range mods {
			t, ok := ComponentTypes[mod.ImportPath()]
			if !ok {
				return nil, fmt.Errorf("manifest %s entry %q: its component type is unknown; add it to stack.ComponentTypes", kind, mod.GoMod)
			}
			set[t] = true
		}
		if len(set) > 0 {
			out[kind] = sortedKeys(set)
		}
	}
	return out, nil
}
