// Package options is what the receivers' options share. Each receiver's
// Option is a function over its unexported config, which embeds
// procfs.Config (meter provider, root, metric selection): Apply applies a
// receiver's options in order over its defaults, and MeterProvider, Root,
// Metric and AllMetrics are the options every receiver has, so that each
// receiver's WithMeterProvider, WithRoot, WithMetric and WithAllMetrics is
// one line over them (with its own doc comment, which go doc shows).
package options

import "go.opentelemetry.io/otel/metric"

// Config is a pointer to a receiver's config: one that embeds
// procfs.Config, whose setters it promotes.
type Config[C any] interface {
	*C
	SetMeterProvider(metric.MeterProvider)
	SetRoot(string)
	SetMetric(name string, on bool)
	SetAllMetrics()
}

// Apply returns c with opts applied in order (the environment, where a
// receiver reads it, is applied later, when the receiver resolves its
// root).
func Apply[C any, O ~func(*C)](c C, opts []O) C {
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// MeterProvider sets the MeterProvider the receiver's instruments are
// created with (procfs.Config.SetMeterProvider).
func MeterProvider[C any, P Config[C]](mp metric.MeterProvider) func(*C) {
	return func(c *C) { P(c).SetMeterProvider(mp) }
}

// Root sets the folder /proc and /sys are read under
// (procfs.Config.SetRoot).
func Root[C any, P Config[C]](root string) func(*C) {
	return func(c *C) { P(c).SetRoot(root) }
}

// Metric turns one metric on or off (procfs.Config.SetMetric).
func Metric[C any, P Config[C]](name string, on bool) func(*C) {
	return func(c *C) { P(c).SetMetric(name, on) }
}

// AllMetrics turns every metric on before any Metric applies
// (procfs.Config.SetAllMetrics).
func AllMetrics[C any, P Config[C]]() func(*C) {
	return func(c *C) { P(c).SetAllMetrics() }
}
