package perf

import (
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/options"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Option configures a Receiver.
type Option func(*config)

type config struct {
	procfs.Config
	pids []int

	// open is perf_event_open(2); tests inject refusals here.
	open eventOpener
}

func newConfig(opts []Option) config {
	return options.Apply(config{Config: procfs.NewConfig()}, opts)
}

// WithMeterProvider sets the MeterProvider the receiver creates its
// instruments with. The default is the global one, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option { return options.MeterProvider[config](mp) }

// WithPIDs sets the processes to count, by process ID. The default is the
// calling process. Each process is counted with all its threads, those
// running at construction and those they start later.
func WithPIDs(pids ...int) Option {
	return func(c *config) { c.pids = append([]int(nil), pids...) }
}

// WithRoot sets the folder that holds the proc tree: the receiver lists a
// process's threads in root/proc/PID/task and reads
// root/proc/sys/kernel/perf_event_paranoid to explain a refusal. The
// default is "/", or the value of the ORTEL_HOST_ROOT environment variable;
// WithRoot overrides both. The counters themselves always come from the
// running kernel.
func WithRoot(root string) Option { return options.Root[config](root) }

// WithMetric turns the metric called name on or off, and with it the
// perf event behind it. Default: on or off as the Default column of
// [Metrics] says. ortel.perf.ipc opens instructions and cycles, and
// ortel.perf.cache.hit_ratio cache references and misses, even when those
// counters are off. New fails on a name the receiver does not emit.
func WithMetric(name string, on bool) Option { return options.Metric[config](name, on) }

// WithAllMetrics turns on every metric the receiver can emit, before any
// WithMetric applies.
func WithAllMetrics() Option { return options.AllMetrics[config]() }
