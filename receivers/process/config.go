package process

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/options"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// config holds what the options set: defaults first, then the environment,
// then the options.
type config struct {
	procfs.Config
	pids   []int
	noSelf bool

	// For tests: how files are opened (to inject EACCES) and the clock.
	open procfs.OpenFunc
	now  func() time.Time
}

func newConfig(opts []Option) config {
	return options.Apply(config{Config: procfs.NewConfig(), now: time.Now}, opts)
}

// Option configures the receiver.
type Option func(*config)

// WithMeterProvider sets the MeterProvider the receiver's instruments are
// created with. Default: the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option { return options.MeterProvider[config](mp) }

// WithRoot reads /proc under root instead of "/" (a fixture tree in tests,
// or the host's file system mounted into a container; PIDs are then those
// of that /proc). It overrides the ORTEL_HOST_ROOT environment variable.
// Default: "/". It is ignored where the receiver reads through gopsutil
// (not Linux).
func WithRoot(root string) Option { return options.Root[config](root) }

// WithPIDs watches the processes with these ids. Default: this process (the
// process root/proc/self names). Repeated ids are watched once.
func WithPIDs(pids ...int) Option {
	return func(c *config) { c.pids = append(c.pids, pids...) }
}

// WithoutSelf starts the receiver with an empty set when no WithPIDs is
// given, instead of watching this process: processes join later through
// Watch (ortel agent --discover). Default: off, this process is watched.
func WithoutSelf() Option {
	return func(c *config) { c.noSelf = true }
}

// WithMetric turns the metric called name on or off. Default: on or off as
// the Default column of [Metrics] says. New fails on a name the receiver
// does not emit.
func WithMetric(name string, on bool) Option { return options.Metric[config](name, on) }

// WithAllMetrics turns on every metric the receiver can emit, before any
// WithMetric applies.
func WithAllMetrics() Option { return options.AllMetrics[config]() }

// withOpener opens /proc files with open: tests inject EACCES with it.
func withOpener(open procfs.OpenFunc) Option {
	return func(c *config) { c.open = open }
}

// withClock reads the time from now: tests make intervals exact with it.
func withClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}
