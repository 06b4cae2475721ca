package memory

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

// metricNames lists every metric the receiver can emit.
var metricNames = []string{
	semconv.SystemMemoryUsageName,
	semconv.SystemMemoryLimitName,
	semconv.SystemMemoryUtilizationName,
	semconv.SystemMemoryLinuxAvailableName,
	semconv.SystemPagingUsageName,
	semconv.SystemPagingUtilizationName,
	semconv.SystemPagingFaultsName,
	semconv.SystemPagingOperationsName,
}

// config holds what the options set: defaults first, then the environment,
// then the options.
type config struct {
	meterProvider metric.MeterProvider
	root          string
	rootSet       bool
	all           bool
	overrides     map[string]bool
}

func newConfig(opts []Option) config {
	c := config{meterProvider: otel.GetMeterProvider()}
	for _, o := range opts {
		o.apply(&c)
	}
	if !c.rootSet {
		root, err := procfs.RootFromEnv()
		if err != nil {
			otel.Handle(err)
		}
		c.root = root
	}
	return c
}

// Option configures the receiver.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithMeterProvider sets the MeterProvider the receiver's instruments are
// created with. Default: the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) {
		if mp != nil {
			c.meterProvider = mp
		}
	})
}

// WithRoot reads /proc under root instead of "/" (a fixture tree
// in tests, or the host's file system mounted into a container). It
// overrides the ORTEL_HOST_ROOT environment variable. Default: "/". It is
// ignored where the receiver reads through gopsutil (not Linux).
func WithRoot(root string) Option {
	return optionFunc(func(c *config) {
		if root != "" {
			c.root, c.rootSet = root, true
		}
	})
}

// WithMetric turns the metric called name on or off. Default: on or off as
// the Default column of docs/metrics.md says (system.paging.utilization is
// off). New fails on a name the receiver does
// not emit.
func WithMetric(name string, on bool) Option {
	return optionFunc(func(c *config) {
		if c.overrides == nil {
			c.overrides = map[string]bool{}
		}
		c.overrides[name] = on
	})
}

// WithAllMetrics turns on every metric the receiver can emit, before any
// WithMetric applies.
func WithAllMetrics() Option {
	return optionFunc(func(c *config) { c.all = true })
}
