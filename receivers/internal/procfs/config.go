package procfs

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers"
)

// Config holds the options every receiver takes: the MeterProvider, the
// root folder that /proc and /sys are read under, and which metrics are
// on. A receiver embeds it in its own config, and its With... options
// set it through these methods, so the rules (a nil provider or an empty
// root is ignored; WithRoot overrides ORTEL_HOST_ROOT; WithAllMetrics
// applies before WithMetric) live here once.
type Config struct {
	// MeterProvider creates the receiver's instruments: the global one
	// unless an option set another.
	MeterProvider metric.MeterProvider
	// Root holds the proc and sys trees: what an option set, else, once
	// ResolveRoot has run, ORTEL_HOST_ROOT or "/".
	Root string

	rootSet   bool
	all       bool
	overrides map[string]bool
}

// NewConfig returns the defaults: the global MeterProvider, no root until
// ResolveRoot, and each metric on or off as the registry's Default says.
func NewConfig() Config {
	return Config{MeterProvider: otel.GetMeterProvider()}
}

// SetMeterProvider sets the MeterProvider. A nil one is ignored.
func (c *Config) SetMeterProvider(mp metric.MeterProvider) {
	if mp != nil {
		c.MeterProvider = mp
	}
}

// SetRoot sets the root, which ORTEL_HOST_ROOT then no longer changes. An
// empty root is ignored.
func (c *Config) SetRoot(root string) {
	if root != "" {
		c.Root, c.rootSet = root, true
	}
}

// SetMetric turns the metric called name on or off. Select fails on a name
// the receiver does not emit.
func (c *Config) SetMetric(name string, on bool) {
	if c.overrides == nil {
		c.overrides = map[string]bool{}
	}
	c.overrides[name] = on
}

// SetAllMetrics turns every metric on, before any SetMetric applies.
func (c *Config) SetAllMetrics() { c.all = true }

// ResolveRoot takes the root from ORTEL_HOST_ROOT (see RootFromEnv) when
// no option set one. A bad value is reported once, through otel.Handle,
// and the root is then "/": constructing a receiver does not fail on it.
func (c *Config) ResolveRoot() {
	if c.rootSet {
		return
	}
	root, err := RootFromEnv()
	if err != nil {
		otel.Handle(err)
	}
	c.Root, c.rootSet = root, true
}

// Select says which of the metrics in table, those the receiver called
// source can emit, are on (see the function Select).
func (c *Config) Select(source string, table []receivers.Metric) (Selection, error) {
	return Select(source, table, c.all, c.overrides)
}

// Resolve is what a receiver's New does first: ResolveRoot, then Select.
func (c *Config) Resolve(source string, table []receivers.Metric) (Selection, error) {
	c.ResolveRoot()
	return c.Select(source, table)
}

// Meter returns the meter of the receiver's instrumentation scope.
func (c *Config) Meter(scope, version string) metric.Meter {
	return c.MeterProvider.Meter(scope, metric.WithInstrumentationVersion(version))
}
