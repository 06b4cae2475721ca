package memory

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/options"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// config holds what the options set: defaults first, then the environment,
// then the options.
type config struct {
	procfs.Config
}

func newConfig(opts []Option) config {
	return options.Apply(config{Config: procfs.NewConfig()}, opts)
}

// Option configures the receiver.
type Option func(*config)

// WithMeterProvider sets the MeterProvider the receiver's instruments are
// created with. Default: the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option { return options.MeterProvider[config](mp) }

// WithRoot reads /proc under root instead of "/" (a fixture tree
// in tests, or the host's file system mounted into a container). It
// overrides the ORTEL_HOST_ROOT environment variable. Default: "/". It is
// ignored where the receiver reads through gopsutil (not Linux).
func WithRoot(root string) Option { return options.Root[config](root) }

// WithMetric turns the metric called name on or off. Default: on or off as
// the Default column of [Metrics] says. New fails on a name the receiver
// does not emit.
func WithMetric(name string, on bool) Option { return options.Metric[config](name, on) }

// WithAllMetrics turns on every metric the receiver can emit, before any
// WithMetric applies.
func WithAllMetrics() Option { return options.AllMetrics[config]() }
