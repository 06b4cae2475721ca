package stack

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Component kinds of a collector configuration, in the order the collector
// lists them.
var Kinds = []string{"receivers", "processors", "exporters", "connectors", "extensions"}

// Collector is the shape of a collector configuration: which components it
// declares and how its pipelines wire them. Component settings are kept as
// raw YAML.
type Collector struct {
	Receivers  map[string]yaml.Node `yaml:"receivers"`
	Processors map[string]yaml.Node `yaml:"processors"`
	Exporters  map[string]yaml.Node `yaml:"exporters"`
	Connectors map[string]yaml.Node `yaml:"connectors"`
	Extensions map[string]yaml.Node `yaml:"extensions"`
	Service    struct {
		Extensions []string            `yaml:"extensions"`
		Pipelines  map[string]Pipeline `yaml:"pipelines"`
	} `yaml:"service"`
}

// Pipeline is one service pipeline.
type Pipeline struct {
	Receivers  []string `yaml:"receivers"`
	Processors []string `yaml:"processors"`
	Exporters  []string `yaml:"exporters"`
}

// LoadCollector reads and parses a collector configuration file. ${env:...}
// references are left as written.
func LoadCollector(path string) (*Collector, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read collector config: %w", err)
	}
	var c Collector
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("parse collector config %q: %w", path, err)
	}
	return &c, nil
}

// ComponentType returns the type part of a component id: "otlp_grpc" for
// "otlp_grpc/jaeger", "batch" for "batch".
func ComponentType(id string) string {
	t, _, _ := strings.Cut(id, "/")
	return t
}

// declared returns the declared component ids of a kind.
func (c *Collector) declared(kind string) map[string]yaml.Node {
	switch kind {
	case "receivers":
		return c.Receivers
	case "processors":
		return c.Processors
	case "exporters":
		return c.Exporters
	case "connectors":
		return c.Connectors
	case "extensions":
		return c.Extensions
	}
	return nil
}

// Types returns, per kind, the sorted distinct component types declared.
func (c *Collector) Types() map[string][]string {
	out := map[string][]string{}
	for _, kind := range Kinds {
		set := map[string]bool{}
		for id := range c.declared(kind) {
			set[ComponentType(id)] = true
		}
		if len(set) > 0 {
			out[kind] = sortedKeys(set)
		}
	}
	return out
}

// Problems lists what is wrong with the wiring, in plain words: a pipeline
// that uses an undeclared component, a declared component no pipeline uses,
// a connector that is not both an exporter and a receiver, an unknown
// pipeline type. Empty when the wiring is sound.
func (c *Collector) Problems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if len(c.Service.Pipelines) == 0 {
		add("service.pipelines is empty")
	}
	used := map[string]map[string]bool{}
	use := func(kind, id string) {
		if used[kind] == nil {
			used[kind] = map[string]bool{}
		}
		used[kind][id] = true
	}
	connectorAs := map[string]map[string]bool{"exporter": {}, "receiver": {}}
	for _, name := range sortedKeys(setOfKeys(c.Service.Pipelines)) {
		p := c.Service.Pipelines[name]
		switch ComponentType(name) {
		case "traces", "metrics", "logs", "profiles":
		default:
			add("pipeline %q: type must be traces, metrics, logs or profiles", name)
		}
		if len(p.Receivers) == 0 {
			add("pipeline %q has no receivers", name)
		}
		if len(p.Exporters) == 0 {
			add("pipeline %q has no exporters", name)
		}
		for _, id := range p.Receivers {
			switch {
			case has(c.Receivers, id):
				use("receivers", id)
			case has(c.Connectors, id):
				use("connectors", id)
				connectorAs["receiver"][id] = true
			default:
				add("pipeline %q: receiver %q is declared neither under receivers nor under connectors", name, id)
			}
		}
		for _, id := range p.Processors {
			if has(c.Processors, id) {
				use("processors", id)
			} else {
				add("pipeline %q: processor %q is not declared under processors", name, id)
			}
		}
		for _, id := range p.Exporters {
			switch {
			case has(c.Exporters, id):
				use("exporters", id)
			case has(c.Connectors, id):
				use("connectors", id)
				connectorAs["exporter"][id] = true
			default:
				add("pipeline %q: exporter %q is declared neither under exporters nor under connectors", name, id)
			}
		}
		for _, list := range [][]string{p.Receivers, p.Processors, p.Exporters} {
			if dup := duplicates(list); len(dup) > 0 {
				add("pipeline %q lists %q more than once", name, dup)
			}
		}
	}
	for _, id := range c.Service.Extensions {
		if has(c.Extensions, id) {
			use("extensions", id)
		} else {
			add("service.extensions: %q is not declared under extensions", id)
		}
	}
	for _, kind := range Kinds {
		for _, id := range sortedKeys(setOfKeys(c.declared(kind))) {
			if !used[kind][id] {
				add("%s: %q is declared but no pipeline uses it", kind, id)
			}
		}
	}
	for _, id := range sortedKeys(setOfKeys(c.Connectors)) {
		if used["connectors"][id] && (!connectorAs["exporter"][id] || !connectorAs["receiver"][id]) {
			add("connector %q must be an exporter of one pipeline and a receiver of another", id)
		}
	}
	return out
}

func has[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func setOfKeys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func duplicates(xs []string) []string {
	var dup []string
	seen := map[string]bool{}
	for _, x := range xs {
		if seen[x] && !slices.Contains(dup, x) {
			dup = append(dup, x)
		}
		seen[x] = true
	}
	return dup
}
