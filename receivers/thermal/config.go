package thermal

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/options"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Option configures a Receiver.
type Option func(*config)

type config struct {
	procfs.Config

	// open opens a file; tests inject failures here.
	open opener
}

func newConfig(opts []Option) config {
	return options.Apply(config{Config: procfs.NewConfig()}, opts)
}

// WithMeterProvider sets the MeterProvider the receiver creates its
// instruments with. The default is the global one, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option { return options.MeterProvider[config](mp) }

// WithRoot sets the folder that holds the sys tree to read: the receiver
// reads root/sys/class/thermal and root/sys/class/hwmon. The default is
// "/", or the value of the ORTEL_HOST_ROOT environment variable (for an
// agent in a container with the host's file system mounted elsewhere);
// WithRoot overrides both. Tests pass fixture trees under testdata/.
func WithRoot(root string) Option { return options.Root[config](root) }

// WithMetric turns the metric called name on or off. Default: on or off as
// the Default column of [Metrics] says. New fails on a name the receiver
// does not emit.
func WithMetric(name string, on bool) Option { return options.Metric[config](name, on) }

// WithAllMetrics turns on every metric the receiver can emit, before any
// WithMetric applies.
func WithAllMetrics() Option { return options.AllMetrics[config]() }
