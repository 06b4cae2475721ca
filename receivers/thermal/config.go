package thermal

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Option configures a Receiver.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	procfs.Config

	// open opens a file; tests inject failures here.
	open opener
}

func newConfig(opts []Option) config {
	c := config{Config: procfs.NewConfig()}
	for _, o := range opts {
		o.apply(&c)
	}
	return c
}

// WithMeterProvider sets the MeterProvider the receiver creates its
// instruments with. The default is the global one, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.SetMeterProvider(mp) })
}

// WithRoot sets the folder that holds the sys tree to read: the receiver
// reads root/sys/class/thermal and root/sys/class/hwmon. The default is
// "/", or the value of the ORTEL_HOST_ROOT environment variable (for an
// agent in a container with the host's file system mounted elsewhere);
// WithRoot overrides both. Tests pass fixture trees under testdata/.
func WithRoot(root string) Option {
	return optionFunc(func(c *config) { c.SetRoot(root) })
}

// WithMetric turns the metric called name on or off. Default: on or off as
// the Default column of [Metrics] says. New fails on a name the receiver
// does not emit.
func WithMetric(name string, on bool) Option {
	return optionFunc(func(c *config) { c.SetMetric(name, on) })
}

// WithAllMetrics turns on every metric the receiver can emit, before any
// WithMetric applies.
func WithAllMetrics() Option {
	return optionFunc(func(c *config) { c.SetAllMetrics() })
}
